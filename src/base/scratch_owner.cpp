#include "kwheel/base/scratch_owner.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace fs = std::filesystem;

namespace kwheel {

namespace {

constexpr size_t kTokenLength = 16;
constexpr std::string_view kOwnerPrefix = ".kwheel-owner-";

const std::string& process_token() {
  static const std::string token = [] {
    std::random_device rd;
    const uint64_t v = (uint64_t{rd()} << 32) ^ rd();
    char buf[kTokenLength + 1];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return std::string(buf);
  }();
  return token;
}

fs::path owner_file(const fs::path& dir, std::string_view token) { return dir / (std::string(kOwnerPrefix) + std::string(token)); }

// Still the file at `path`? A sweeper may have unlinked it between our
// open() and flock(): then the lock proves nothing and we start again.
bool still_linked(int fd, const fs::path& path) {
  struct stat a {}, b {};
  return ::fstat(fd, &a) == 0 && a.st_nlink > 0 && ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

Error cannot_create(const fs::path& path, int err) {
  return Error(ErrorKind::io, "cannot create '" + path.string() + "': " + std::strerror(err) + "; check that the directory is writable");
}

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

struct OwnerLock {
  fs::path path;
  UniqueFd fd;
  std::unique_ptr<RemoveOnInterrupt> on_interrupt;

  explicit OwnerLock(const fs::path& dir) : path(owner_file(dir, process_token())) {
    for (int attempt = 0; attempt < 100; ++attempt) {
      UniqueFd f(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
      if (f.get() < 0 || ::flock(f.get(), LOCK_EX) != 0) throw cannot_create(path, errno);
      if (!still_linked(f.get(), path)) continue;
      fd = std::move(f);
      on_interrupt = std::make_unique<RemoveOnInterrupt>(path);
      return;
    }
    throw Error(ErrorKind::io, "cannot hold a lock on '" + path.string() + "': another process keeps removing it");
  }
  ~OwnerLock() {
    // Unlinked while still locked, so no sweeper can take it for a dead owner's.
    ::unlink(path.c_str());
  }
};

namespace {

// A directory, whatever path names it. "d", "d/sub/..", "./d", its
// absolute path and a symlink to it must share one lock: a second flock on
// our own lock file, through a second open file description, would wait on
// this very process forever (and hold g_mu while it waits).
struct DirId {
  dev_t dev;
  ino_t ino;
  auto operator<=>(const DirId&) const = default;
};

std::mutex g_mu;
// Swept by path as written: a removed directory's inode number is soon
// reused by a new one, which must still be swept; sweeping one directory
// again under another name only costs a scan.
std::set<fs::path> g_swept;
std::map<DirId, std::weak_ptr<OwnerLock>> g_locks;  // the live lock of each directory

}  // namespace

OwnerLease::OwnerLease(const fs::path& dir) {
  const fs::path key = dir.empty() ? fs::path(".") : dir;
  std::lock_guard lock(g_mu);
  if (g_swept.insert(key).second) sweep_stale_scratch(key);  // what killed runs left here, before we add ours
  struct stat st {};
  if (::stat(key.c_str(), &st) != 0) throw cannot_create(owner_file(key, process_token()), errno);
  std::weak_ptr<OwnerLock>& slot = g_locks[DirId{st.st_dev, st.st_ino}];
  lock_ = slot.lock();
  if (!lock_) {
    lock_ = std::make_shared<OwnerLock>(key);
    slot = lock_;
  }
}

OwnerLease::~OwnerLease() {
  std::lock_guard lock(g_mu);
  lock_.reset();  // the last lease of a directory removes its lock file, under g_mu
}

const std::string& OwnerLease::token() { return process_token(); }

std::string OwnerLease::stem(std::string_view kind) { return "kwheel-" + std::string(kind) + "-" + process_token() + "-"; }

std::optional<std::string> scratch_token(std::string_view name) {
  if (name.starts_with(kOwnerPrefix)) {
    auto t = name.substr(kOwnerPrefix.size());
    if (t.size() == kTokenLength && is_hex(t)) return std::string(t);
    return std::nullopt;
  }
  for (size_t at = name.find("kwheel-"); at != std::string_view::npos; at = name.find("kwheel-", at + 1)) {
    size_t kind_end = at + 7;
    while (kind_end < name.size() && name[kind_end] >= 'a' && name[kind_end] <= 'z') ++kind_end;
    if (kind_end == at + 7 || kind_end >= name.size() || name[kind_end] != '-') continue;
    auto t = name.substr(kind_end + 1, kTokenLength);
    const size_t after = kind_end + 1 + kTokenLength;
    if (t.size() == kTokenLength && is_hex(t) && after < name.size() && name[after] == '-') return std::string(t);
  }
  return std::nullopt;
}

void sweep_stale_scratch(const fs::path& dir) {
  std::error_code ec;
  std::map<std::string, std::vector<fs::path>> by_token;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (auto t = scratch_token(it->path().filename().string()); t && *t != process_token()) by_token[*t].push_back(it->path());
  for (const auto& [token, entries] : by_token) {
    const fs::path lock_path = owner_file(dir, token);
    UniqueFd fd(::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0 && errno != ENOENT) continue;  // cannot tell: leave it
    if (fd.get() >= 0 && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its owner is alive
    std::error_code rm;
    for (const auto& p : entries)
      if (p != lock_path) fs::remove_all(p, rm);
    if (fd.get() >= 0) ::unlink(lock_path.c_str());  // last, still locked: see OwnerLock
  }
}

}  // namespace kwheel
