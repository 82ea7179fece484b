#include "kwheel/hub/hf_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/safe_path.hpp"

namespace kwheel {
namespace fs = std::filesystem;

namespace {

std::string folder_name(const std::string& repo_type, const std::string& repo_id) {
  // huggingface_hub.file_download.repo_folder_name: "{type}s--{org}--{name}".
  std::string name = repo_type + "s--" + repo_id;
  for (size_t pos; (pos = name.find('/')) != std::string::npos;) name.replace(pos, 1, "--");
  return name;
}

void ensure_dir(const fs::path& p) {
  std::error_code ec;
  fs::create_directories(p, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create cache directory '" + p.string() + "': " + ec.message() + "; set HF_HUB_CACHE or --cache-dir to a writable place");
}

void check_name(const std::string& what, const std::string& value) {
  if (auto why = unsafe_path_reason(value); !why.empty())
    throw Error(ErrorKind::input, what + " '" + value + "' cannot name a cache file: " + why);
}

}  // namespace

FileLock::FileLock(const fs::path& path) {
  ensure_dir(path.parent_path());
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(ErrorKind::io, "cannot open lock file '" + path.string() + "': " + std::strerror(errno));
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno != EINTR) {
      ::close(fd_);
      throw Error(ErrorKind::io, "cannot lock '" + path.string() + "': " + std::strerror(errno));
    }
  }
}

FileLock::FileLock(FileLock&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

HfCache::HfCache(fs::path root, const std::string& repo_type, const std::string& repo_id)
    : root_(std::move(root)),
      repo_dir_(root_ / folder_name(repo_type, repo_id)),
      locks_dir_(root_ / ".locks" / folder_name(repo_type, repo_id)) {}

fs::path HfCache::blob(const std::string& etag) const {
  check_name("etag", etag);
  return repo_dir_ / "blobs" / etag;
}

fs::path HfCache::incomplete(const std::string& etag) const { return blob(etag).string() + ".incomplete"; }

fs::path HfCache::snapshot_dir(const std::string& commit) const {
  check_name("commit", commit);
  return repo_dir_ / "snapshots" / commit;
}

fs::path HfCache::snapshot_file(const std::string& commit, const std::string& path) const {
  check_name("path", path);
  return snapshot_dir(commit) / path;
}

FileLock HfCache::lock_blob(const std::string& etag) const {
  check_name("etag", etag);
  return FileLock(locks_dir_ / (etag + ".lock"));
}

void HfCache::link_snapshot(const std::string& commit, const std::string& path, const std::string& etag) const {
  const fs::path link = snapshot_file(commit, path);
  const fs::path target = fs::relative(blob(etag), link.parent_path());
  ensure_dir(link.parent_path());
  std::error_code ec;
  if (fs::is_symlink(link, ec) && fs::read_symlink(link, ec) == target) return;
  // Replace atomically: another process may be reading the old link.
  const fs::path tmp = link.string() + ".kwheel-link-" + std::to_string(::getpid());
  fs::remove(tmp, ec);
  fs::create_symlink(target, tmp, ec);
  if (!ec) fs::rename(tmp, link, ec);
  if (ec) throw Error(ErrorKind::io, "cannot link '" + link.string() + "' into the cache: " + ec.message());
}

void HfCache::write_ref(const std::string& ref, const std::string& commit) const {
  check_name("ref", ref);
  const fs::path p = repo_dir_ / "refs" / ref;
  ensure_dir(p.parent_path());
  if (read_ref(ref) == commit) return;
  write_file_atomic(p, commit);
}

std::optional<std::string> HfCache::read_ref(const std::string& ref) const {
  if (!unsafe_path_reason(ref).empty()) return std::nullopt;
  std::ifstream in(repo_dir_ / "refs" / ref);
  std::string commit;
  if (!(in >> commit)) return std::nullopt;
  return commit;
}

std::vector<std::pair<std::string, std::string>> HfCache::refs() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  const fs::path dir = repo_dir_ / "refs";
  if (!fs::is_directory(dir, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    std::string name = fs::relative(it->path(), dir).generic_string();
    if (auto c = read_ref(name)) out.emplace_back(name, *c);
  }
  return out;
}

void HfCache::save_listing(const std::string& commit, const nlohmann::json& listing) const {
  check_name("commit", commit);
  // A warm run lists the same commit again. Rewriting it, as write_ref
  // would, costs an fsync and a rename, which wait behind whatever else the
  // disk is flushing (1-2 s after a large build, docs/performance.md).
  if (load_listing(commit) == listing) return;
  const fs::path p = repo_dir_ / ".kwheel" / "listings" / (commit + ".json");
  ensure_dir(p.parent_path());
  write_file_atomic(p, listing.dump());
}

std::optional<nlohmann::json> HfCache::load_listing(const std::string& commit) const {
  if (!unsafe_path_reason(commit).empty()) return std::nullopt;
  std::ifstream in(repo_dir_ / ".kwheel" / "listings" / (commit + ".json"));
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  // kwheel wrote it, but the disk is shared: a damaged listing is no listing.
  auto sound = [](const nlohmann::json& e) {
    return e.is_object() && e.contains("path") && e["path"].is_string() && e.contains("size") && e["size"].is_number_unsigned() &&
           e.contains("oid") && e["oid"].is_string() && (!e.contains("lfs") || e["lfs"].is_string() || e["lfs"].is_null());
  };
  if (j.is_discarded() || !j.is_array() || !std::all_of(j.begin(), j.end(), sound)) return std::nullopt;
  return j;
}

void HfCache::save_history_length(const std::string& commit, uint64_t length) const {
  check_name("commit", commit);
  const fs::path p = repo_dir_ / ".kwheel" / "history" / commit;
  ensure_dir(p.parent_path());
  write_file_atomic(p, std::to_string(length) + "\n");
}

std::optional<uint64_t> HfCache::load_history_length(const std::string& commit) const {
  if (!unsafe_path_reason(commit).empty()) return std::nullopt;
  std::ifstream in(repo_dir_ / ".kwheel" / "history" / commit);
  std::string text;
  if (!in || !std::getline(in, text) || text.empty() || text.size() > 12 ||
      !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::nullopt;  // damaged: ask the Hub again
  return std::stoull(text);
}

}  // namespace kwheel
