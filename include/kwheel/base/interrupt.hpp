#pragma once
// What an interrupted kwheel leaves behind: nothing. SIGINT, SIGTERM and
// SIGHUP are taken by one thread (sigwait), not by a handler, so the
// cleanup runs in ordinary code: it kills the process groups of children
// that are still running, removes scratch files and directories whole, and
// then the process dies of the same signal (its exit status stays honest).
#include <filesystem>
#include <sys/types.h>

namespace kwheel {

// Call once, first thing in main, before any thread starts: the signals are
// blocked in the calling thread, so every thread created later inherits the
// mask and only the cleanup thread receives them. Children must not inherit
// it: run_process resets the mask and the dispositions of what it spawns.
void install_interrupt_cleanup();

// While alive, `path` (a file, or a directory with its contents) is removed
// if the process is interrupted. With `suffixed_siblings`, so are files
// named "<path>.<anything>" beside it: libzip writes an archive through a
// temp file of its own whose name kwheel never learns.
class RemoveOnInterrupt {
 public:
  explicit RemoveOnInterrupt(std::filesystem::path path, bool suffixed_siblings = false);
  ~RemoveOnInterrupt();
  RemoveOnInterrupt(const RemoveOnInterrupt&) = delete;
  RemoveOnInterrupt& operator=(const RemoveOnInterrupt&) = delete;
  // Stop watching (the path was committed, or is removed by its owner).
  void release();

 private:
  int slot_ = -1;
};

// While alive, the process group `pgid` is sent SIGKILL if kwheel is
// interrupted: children run in their own group (so a timeout kills their
// children too), and the terminal's Ctrl-C therefore never reaches them.
class KillOnInterrupt {
 public:
  explicit KillOnInterrupt(pid_t pgid);
  ~KillOnInterrupt();
  KillOnInterrupt(const KillOnInterrupt&) = delete;
  KillOnInterrupt& operator=(const KillOnInterrupt&) = delete;

 private:
  int slot_ = -1;
};

}  // namespace kwheel
