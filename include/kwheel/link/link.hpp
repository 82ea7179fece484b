#pragma once
// `kwheel link --python PY`: the kernel wheels installed for PY made
// visible to kernels' loaders (get_kernel, has_kernel, kernelize's
// LayerRepository, load_kernel and get_locked_kernel with kernels.lock,
// get_kernel_dep), with the version, commit and variant each was built
// from and nothing else. Each is verified as `kwheel verify --python`
// verifies it before it is linked; one that fails is named with its reason
// and nothing of it is linked. With a kernels.lock every locked kernel must
// be installed at its locked commit, or nothing is written.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "kwheel/link/cache_links.hpp"
#include "kwheel/trust/verify_chain.hpp"

namespace kwheel {

struct LinkOptions {
  std::string python;
  std::optional<std::filesystem::path> cache;  // --cache; else default_kernels_cache()
  std::optional<std::filesystem::path> lock;   // --lock kernels.lock
  ChainOptions chain;                          // as `kwheel verify` takes them
};

struct LinkedKernel {
  enum class Status { linked, skipped, failed } status = Status::failed;
  std::string distribution;       // "img2gray 1.3+torch.cpu"
  std::optional<KernelOrigin> origin;
  std::filesystem::path package_dir;
  std::string why;                // skipped, failed: one line
  bool stand_in_revision = false; // a directory build: the commit is kwheel's stand-in
  int exit_code = 0;              // failed: 8 a broken chain, 9 no trusted signer, 3 unreadable or unlinkable
};

struct LockMismatch {
  std::string repo_id;
  std::string locked;     // the commit the lock names
  std::string installed;  // what is installed: commits, or "nothing"
};

struct LinkReport {
  std::filesystem::path cache;
  bool default_cache = true;
  std::string python;
  std::vector<LinkedKernel> kernels;
  std::vector<std::string> removed;       // repo ids unlinked: nothing installed needs them now
  std::vector<LockMismatch> lock_mismatches;
  bool written = false;                   // false: the cache was left as it was (a lock mismatch)
  // 0: every kernel linked or skipped; 5: a lock mismatch (nothing written);
  // else the first failed kernel's exit_code.
  int exit_code() const;
  nlohmann::json to_json() const;
};

LinkReport link_kernels(const LinkOptions& options);

// "export KERNELS_CACHE=DIR", DIR quoted for a POSIX shell where it must be.
std::string export_line(const std::filesystem::path& cache);

// The revision a directory build without a recorded commit is linked under:
// 40 hex digits from its repo id, distribution and version, the same on
// every run, so `revision=` and a lock can name it.
std::string stand_in_revision(const std::string& repo_id, const std::string& distribution);

}  // namespace kwheel
