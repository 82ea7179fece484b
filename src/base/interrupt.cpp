#include "kwheel/base/interrupt.hpp"

#include <pthread.h>
#include <signal.h>

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
  std::map<int, pid_t> groups;
};

Registry& registry() {
  static Registry r;
  return r;
}

void remove_with_siblings(const Watched& w) {
  std::error_code ec;
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
  Registry& r = registry();
  r.mu.lock();
  // Children first: they may still be writing into the scratch removed next.
  for (const auto& [_, pgid] : r.groups) ::kill(-pgid, SIGKILL);
  for (const auto& [_, w] : r.paths) remove_with_siblings(w);
  ::signal(sig, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);  // only if the default action did not end us
}

}  // namespace

void install_interrupt_cleanup() {
  registry();  // built before any signal can need it
  const sigset_t set = interrupt_set();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    int sig = 0;
    while (::sigwait(&set, &sig) != 0) {
    }
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
