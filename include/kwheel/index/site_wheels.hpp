#pragma once
// What the site builder (index/simple_index.hpp) learns by reading a wheel,
// once: its sha256 (hashed as it is read), METADATA, GPU code, signature
// verdict and Hub revision, kept in the manifest (index/site_manifest.hpp)
// so that later runs do not open it again; and the identity (size, mtime,
// inode) that tells a later run the file is the one that was read.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/base/unique_fd.hpp"
#include "kwheel/index/site_manifest.hpp"

namespace kwheel {
class WheelArchive;
}

namespace kwheel::site {

// FileIdentity (index/site_manifest.hpp) of a regular file, or nullopt.
std::optional<FileIdentity> identity_of(const std::filesystem::path& file);
// The same for `name` in the directory `dir` is a handle of (O_PATH): a run
// stats thousands of files of one directory (SITE/files/, DIST/), and the
// kernel then looks up one name, not every component of the path (path
// lookup was a twentieth of a run that adds 8 wheels to a site of 2,000).
std::optional<FileIdentity> identity_at(int dir, const char* name);

// identity_of through a handle of the last directory asked about, for one
// loop over files that mostly share one. Kept no longer than the loop: a
// handle kept across a run could outlive the directory its path named.
class DirectoryStat {
 public:
  std::optional<FileIdentity> identity(const std::string& file);

 private:
  std::string dir_;
  UniqueFd fd_;
};

// What a recorded signature verdict depends on besides the wheel's bytes:
// the signer policy, the trusted root and kwheel's version. A site whose
// manifest names another one has every verdict checked again.
std::string signature_policy(const SignatureOptions& options);

ShownSignature signature_of(const WheelArchive& wheel, const SignatureOptions& options);
std::vector<std::string> gpu_code_of(const WheelArchive& wheel);
// The Hub repo and commit a wheel's METADATA records, into `e`.
void read_hub_revision(const std::string& metadata, Entry& e);

// A wheel given on the command line, read whole once (refused as before:
// a PEP 825 variant wheel, a RECORD that does not hold).
Entry given_entry(const std::filesystem::path& wheel, const SiteOptions& o);

// fn(i) for i in [0, n) on `jobs` workers (0: one per CPU); the first
// error in index order is rethrown once all have stopped, and no new item
// starts after one failed.
void for_each_parallel(size_t n, unsigned jobs, const std::function<void(size_t)>& fn);

}  // namespace kwheel::site
