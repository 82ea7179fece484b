#include "kwheel/base/interrupt.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace kwheel {
namespace {

struct Watched {
  std::filesystem::path path;
  bool suffixed_siblings = false;
};

// One registry for the process. The cleanup thread takes the lock and never
// gives it back (the process dies holding it), so nothing can be added or
// released half-way through a cleanup.
struct Registry {
  std::mutex mu;
  int next = 0;
  std::map<int, Watched> paths;
  std::map<int, std::filesystem::path> created_dirs;
  std::map<int, pid_t> groups;
  std::string notice;  // written to stderr once the cleanup is done
};

Registry& registry() {
  static Registry r;
  return r;
}

// Held by DeferInterrupts; the cleanup takes it before anything else, and,
// as the registry's, never gives it back.
std::mutex& deferred() {
  static std::mutex m;
  return m;
}

// Set once a signal came: a section that deferred it does not go on past
// its end, the cleanup ends the process there.
std::atomic<bool> interrupted{false};

void remove_with_siblings(const Watched& w) {
  std::error_code ec;
  // Again while it is there: its owner may be removing it at the same time
  // (a signal that waited for DeferInterrupts arrives as the run ends), and
  // remove_all stops at the first entry that vanished under it.
  for (int tries = 0; tries < 8 && std::filesystem::symlink_status(w.path, ec).type() != std::filesystem::file_type::not_found; ++tries)
    std::filesystem::remove_all(w.path, ec);
  if (!w.suffixed_siblings) return;
  const std::string prefix = w.path.filename().string() + ".";
  for (auto it = std::filesystem::directory_iterator(w.path.parent_path(), ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().starts_with(prefix)) std::filesystem::remove_all(it->path(), ec);
}

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP};

sigset_t interrupt_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kSignals) sigaddset(&set, sig);
  return set;
}

[[noreturn]] void clean_up_and_die(int sig) {
  deferred().lock();
  Registry& r = registry();
  r.mu.lock();
  // Children first: they may still be writing into the scratch removed next.
  for (const auto& [_, pgid] : r.groups) ::kill(-pgid, SIGKILL);
  for (const auto& [_, w] : r.paths) remove_with_siblings(w);
  std::error_code ec;
  for (auto it = r.created_dirs.rbegin(); it != r.created_dirs.rend(); ++it) std::filesystem::remove(it->second, ec);
  if (!r.notice.empty()) {
    // Straight to the descriptor: the streams may be mid-line in another
    // thread. On a terminal, the progress line (and the echoed ^C) is
    // cleared first so the notice stands alone.
    std::string line = ::isatty(STDERR_FILENO) ? "\r\033[K" : "";
    line.append(r.notice).append(": interrupted");
    if (sig != SIGINT) line.append(sig == SIGTERM ? " (SIGTERM)" : " (SIGHUP)");
    line.append("\n");
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);  // only if the default action did not end us
}

}  // namespace

void install_interrupt_cleanup(std::string program) {
  registry().notice = std::move(program);  // built before any signal can need it
  const sigset_t set = interrupt_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    while (::sigwait(&set, &sig) != 0) {
    }
    interrupted = true;
    clean_up_and_die(sig);
  }).detach();
}

RemoveOnInterrupt::RemoveOnInterrupt(std::filesystem::path path, bool suffixed_siblings) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  slot_ = r.next++;
  r.paths.emplace(slot_, Watched{std::move(path), suffixed_siblings});
}

RemoveOnInterrupt::~RemoveOnInterrupt() { release(); }

void RemoveOnInterrupt::release() {
  if (slot_ < 0) return;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.paths.erase(slot_);
  slot_ = -1;
}

RemoveEmptyDirOnInterrupt::RemoveEmptyDirOnInterrupt(std::filesystem::path dir) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  slot_ = r.next++;
  r.created_dirs.emplace(slot_, std::move(dir));
}

RemoveEmptyDirOnInterrupt::~RemoveEmptyDirOnInterrupt() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.created_dirs.erase(slot_);
}

DeferInterrupts::DeferInterrupts() { deferred().lock(); }

DeferInterrupts::~DeferInterrupts() {
  deferred().unlock();
  // The cleanup now runs and ends the process; this thread waits for it
  // rather than go on with a run the user stopped.
  if (interrupted.load())
    for (;;) ::pause();
}

KillOnInterrupt::KillOnInterrupt(pid_t pgid) {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  slot_ = r.next++;
  r.groups.emplace(slot_, pgid);
}

KillOnInterrupt::~KillOnInterrupt() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.groups.erase(slot_);
}

}  // namespace kwheel
