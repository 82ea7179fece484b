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

namespace {

bool is_token(std::string_view s) { return s.size() == kTokenLength && is_hex(s); }

// mkdtemp's and libzip's six random characters.
bool is_random_part(std::string_view s) {
  if (s.size() != 6) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return false;
  return true;
}

// A TempDir purpose as the code names them ("new", "validate", "pin-wheel").
bool is_kind(std::string_view s) {
  if (s.empty() || s.front() == '-' || s.back() == '-' || s.find("--") != std::string_view::npos) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
  return true;
}

// TempPath's counter, as std::to_string writes an unsigned.
bool is_counter(std::string_view s) {
  if (s.empty() || s.size() > 10 || (s.size() > 1 && s.front() == '0')) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// "<head>-T-<tail>": the token before the last "-<tail>", and the head before it.
std::optional<std::pair<std::string_view, std::string_view>> split_token(std::string_view s, size_t tail) {
  if (s.size() < tail + kTokenLength + 2) return std::nullopt;
  const size_t dash2 = s.size() - tail - 1, dash1 = dash2 - kTokenLength - 1;
  if (s[dash2] != '-' || s[dash1] != '-') return std::nullopt;
  const auto token = s.substr(dash1 + 1, kTokenLength);
  if (!is_token(token)) return std::nullopt;
  return std::pair{s.substr(0, dash1), token};
}

// ".LEAF.kwheel-" + what follows: the part after the last ".kwheel-", if
// a non-empty leaf stands before it.
std::optional<std::string_view> after_leaf(std::string_view head) {
  const size_t at = head.rfind(".kwheel-");
  if (head.size() < 2 || head.front() != '.' || at == std::string_view::npos || at < 2) return std::nullopt;
  return head.substr(at + 8);
}

// kwheel-K-T-R (in $TMPDIR) or .LEAF.kwheel-K-T-R[.old] (beside a target).
std::optional<std::string> directory_token(std::string_view name) {
  for (std::string_view s : {name, name.ends_with(".old") ? name.substr(0, name.size() - 4) : std::string_view{}}) {
    if (s.empty() || !is_random_part(s.substr(s.size() < 6 ? 0 : s.size() - 6))) continue;
    auto split = split_token(s, 6);
    if (!split) continue;
    auto [head, token] = *split;
    if (s.size() == name.size() && head.starts_with("kwheel-") && is_kind(head.substr(7))) return std::string(token);
    if (auto kind = after_leaf(head); kind && is_kind(*kind)) return std::string(token);
  }
  return std::nullopt;
}

// .LEAF.kwheel-tmp-T-N[.R] (TempPath, and libzip's own temp beside it).
std::optional<std::string> file_token(std::string_view name) {
  const size_t dot = name.rfind('.');
  for (std::string_view s : {name, dot != std::string_view::npos && is_random_part(name.substr(dot + 1)) ? name.substr(0, dot)
                                                                                                     : std::string_view{}}) {
    const size_t dash = s.rfind('-');
    if (s.empty() || dash == std::string_view::npos || !is_counter(s.substr(dash + 1))) continue;
    auto split = split_token(s, s.size() - dash - 1);
    if (!split) continue;
    if (auto kind = after_leaf(split->first); kind && *kind == "tmp") return std::string(split->second);
  }
  return std::nullopt;
}

}  // namespace

std::optional<ScratchName> parse_scratch_name(std::string_view name) {
  if (name.empty() || name.size() > 255) return std::nullopt;  // NAME_MAX: nothing longer was made here
  if (name.starts_with(kOwnerPrefix)) {
    if (!is_token(name.substr(kOwnerPrefix.size()))) return std::nullopt;
    return ScratchName{std::string(name.substr(kOwnerPrefix.size())), true, true, false};
  }
  ScratchName n;
  if (auto t = directory_token(name)) n.token = *t, n.may_be_directory = true;
  if (auto t = file_token(name)) n.token = *t, n.may_be_file = true;  // the same token: both read it from one place
  if (!n.may_be_file && !n.may_be_directory) return std::nullopt;
  return n;
}

std::optional<std::string> scratch_token(std::string_view name) {
  if (auto n = parse_scratch_name(name)) return n->token;
  return std::nullopt;
}

void sweep_stale_scratch(const fs::path& dir) {
  const uid_t me = ::geteuid();
  // Whose is it, by what is on disk: a symlink, another user's entry, or a
  // type kwheel never made under that name is not ours, whatever its name.
  auto ours = [me](const fs::path& p, bool file, bool directory) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || st.st_uid != me) return false;
    return (file && S_ISREG(st.st_mode)) || (directory && S_ISDIR(st.st_mode));
  };
  std::error_code ec;
  std::map<std::string, std::vector<fs::path>> by_token;  // a token with a lock file has an entry, maybe empty
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto n = parse_scratch_name(it->path().filename().string());
    if (!n || n->token == process_token()) continue;
    if (n->lock) {
      by_token[n->token];
    } else if (ours(it->path(), n->may_be_file, n->may_be_directory)) {
      by_token[n->token].push_back(it->path());
    }
  }
  for (const auto& [token, entries] : by_token) {
    // The marker: the lock file this token's process made before any of its
    // scratch, still there, ours, and held by no one. No marker, no proof.
    const fs::path lock_path = owner_file(dir, token);
    UniqueFd fd(::open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat st {};
    if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != me || st.st_size != 0) continue;
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0 || !still_linked(fd.get(), lock_path)) continue;  // alive, or not that file
    std::error_code rm;
    for (const auto& p : entries) fs::remove_all(p, rm);
    ::unlink(lock_path.c_str());  // last, still locked: see OwnerLock
  }
}

}  // namespace kwheel
