#pragma once
// The Hugging Face cache layout (HF_HUB_CACHE), shared with huggingface_hub
// and `kernels`: {models|kernels}--org--name/{blobs,snapshots,refs}, blobs
// named by their etag (sha256 for LFS files, git blob id otherwise),
// snapshots as relative symlinks into blobs, and .locks/ for writers.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kwheel {

// An exclusive flock(2) on a lock file, released on destruction; the same
// files huggingface_hub's filelock uses, so concurrent writers cooperate.
class FileLock {
 public:
  explicit FileLock(const std::filesystem::path& path);
  FileLock(FileLock&& o) noexcept;
  FileLock& operator=(FileLock&&) = delete;
  ~FileLock();

 private:
  int fd_ = -1;
};

class HfCache {
 public:
  HfCache(std::filesystem::path root, const std::string& repo_type, const std::string& repo_id);

  const std::filesystem::path& repo_dir() const { return repo_dir_; }
  std::filesystem::path blob(const std::string& etag) const;
  std::filesystem::path incomplete(const std::string& etag) const;
  std::filesystem::path snapshot_file(const std::string& commit, const std::string& path) const;
  std::filesystem::path snapshot_dir(const std::string& commit) const;
  FileLock lock_blob(const std::string& etag) const;

  // Makes snapshots/<commit>/<path> a relative symlink to the blob.
  void link_snapshot(const std::string& commit, const std::string& path, const std::string& etag) const;
  void write_ref(const std::string& ref, const std::string& commit) const;
  std::optional<std::string> read_ref(const std::string& ref) const;
  std::vector<std::pair<std::string, std::string>> refs() const;  // (name, commit)

  // kwheel's record of a complete build/ listing for a commit, kept beside
  // (not inside) the snapshot so other tools see a standard cache.
  void save_listing(const std::string& commit, const nlohmann::json& listing) const;
  std::optional<nlohmann::json> load_listing(const std::string& commit) const;
  // kwheel's record of how many commits the Hub lists in a commit's history
  // (a commit's history never changes, so this never goes stale).
  void save_history_length(const std::string& commit, uint64_t length) const;
  std::optional<uint64_t> load_history_length(const std::string& commit) const;

 private:
  std::filesystem::path root_;
  std::filesystem::path repo_dir_;
  std::filesystem::path locks_dir_;
};

}  // namespace kwheel
