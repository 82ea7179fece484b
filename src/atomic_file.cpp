#include "kwheel/atomic_file.hpp"

#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "kwheel/error.hpp"

namespace kwheel {
namespace {

std::atomic<unsigned> g_counter{0};

// Live temp paths, readable from a signal handler: fixed storage, no
// allocation or locks there, only unlink(2), which is async-signal-safe.
struct Slot {
  std::atomic<bool> used{false};
  char path[4096];
};
constexpr size_t kSlots = 1024;
Slot g_slots[kSlots];

int register_temp(const std::filesystem::path& p) {
  const std::string& s = p.native();
  if (s.size() >= sizeof(Slot::path)) return -1;
  for (size_t i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].used.load(std::memory_order_relaxed) || !g_slots[i].used.compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_slots[i].path, s.c_str(), s.size() + 1);
    return static_cast<int>(i);
  }
  return -1;  // more live temps than slots: still removed by the destructor
}

void unregister_temp(int slot) {
  if (slot >= 0) g_slots[slot].used.store(false);
}

// libzip writes an archive through its own temp file, "<our temp>.XXXXXX",
// whose name we never learn; scan the directory for it with raw syscalls
// (getdents64, unlinkat: async-signal-safe, unlike readdir).
void unlink_with_suffixes(const char* path) {
  ::unlink(path);
  const char* slash = std::strrchr(path, '/');
  if (!slash) return;
  char dir[sizeof(Slot::path)];
  size_t dlen = static_cast<size_t>(slash - path);
  std::memcpy(dir, path, dlen);
  dir[dlen == 0 ? 1 : dlen] = '\0';
  if (dlen == 0) dir[0] = '/';
  const char* base = slash + 1;
  const size_t blen = std::strlen(base);
  int fd = ::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[8192];
  for (long n; (n = ::syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0;) {
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + off);
      if (std::strncmp(d->d_name, base, blen) == 0 && d->d_name[blen] == '.') ::unlinkat(fd, d->d_name, 0);
      off += d->d_reclen;
    }
  }
  ::close(fd);
}

extern "C" void remove_temps_and_die(int sig) {
  for (auto& slot : g_slots)
    if (slot.used.load()) unlink_with_suffixes(slot.path);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void fsync_path(const std::filesystem::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TempPath::TempPath(std::filesystem::path final_path) : final_(std::move(final_path)) {
  temp_ = final_.parent_path() /
          ("." + final_.filename().string() + ".kwheel-tmp-" + std::to_string(::getpid()) + "-" +
           std::to_string(g_counter.fetch_add(1)));
  slot_ = register_temp(temp_);
}

TempPath::~TempPath() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
  unregister_temp(slot_);
}

void TempPath::commit() {
  fsync_path(temp_);
  if (::rename(temp_.c_str(), final_.c_str()) != 0)
    throw Error(ErrorKind::io, "cannot move '" + temp_.string() + "' to '" + final_.string() + "': " + std::strerror(errno));
  committed_ = true;
  unregister_temp(slot_);
  slot_ = -1;
}

void install_temp_cleanup_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = remove_temps_and_die;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
}

void sweep_stale_temps(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    auto mark = name.find(".kwheel-tmp-");
    if (name.empty() || name[0] != '.' || mark == std::string::npos) continue;
    const long pid = std::strtol(name.c_str() + mark + 12, nullptr, 10);
    if (pid <= 0 || pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code rm;
    std::filesystem::remove(it->path(), rm);
  }
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  TempPath tmp(path);
  {
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error(ErrorKind::io, "cannot write '" + path.string() + "': " + std::strerror(errno));
  }
  tmp.commit();
}

}  // namespace kwheel
