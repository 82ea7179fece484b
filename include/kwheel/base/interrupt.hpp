#pragma once
// What an interrupted kwheel leaves behind: nothing. SIGINT, SIGTERM and
// SIGHUP are taken by one thread (sigwait), not by a handler, so the
// cleanup runs in ordinary code: it kills the process groups of children
// that are still running, removes scratch files and directories whole,
// removes the directories the run created if that left them empty, says so
// in one line on stderr, and then the process dies of the same signal (its
// exit status stays honest: a shell shows 130 for Ctrl-C).
#include <filesystem>
#include <string>
#include <sys/types.h>

namespace kwheel {

// Call once, first thing in main, before any thread starts: the signals are
// blocked in the calling thread, so every thread created later inherits the
// mask and only the cleanup thread receives them. Children must not inherit
// it: run_process resets the mask and the dispositions of what it spawns.
// `program` names the one line written to stderr once the cleanup is done
// ("kwheel: interrupted"); empty: nothing is written.
void install_interrupt_cleanup(std::string program = {});

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

// While alive, the directory `dir` (one this run created) is removed if the
// process is interrupted and it is empty once the scratch above is gone:
// what another process put there meanwhile is never lost. Directories go
// innermost (latest registered) first.
class RemoveEmptyDirOnInterrupt {
 public:
  explicit RemoveEmptyDirOnInterrupt(std::filesystem::path dir);
  ~RemoveEmptyDirOnInterrupt();
  RemoveEmptyDirOnInterrupt(const RemoveEmptyDirOnInterrupt&) = delete;
  RemoveEmptyDirOnInterrupt& operator=(const RemoveEmptyDirOnInterrupt&) = delete;

 private:
  int slot_ = -1;
};

// While alive, an interrupt waits: the cleanup (and the death) comes once
// it is gone, and the thread that held it goes no further. For a short run
// of renames that must not stop half-way (index's commit of an updated
// site); nothing slow may run under it.
class DeferInterrupts {
 public:
  DeferInterrupts();
  ~DeferInterrupts();
  DeferInterrupts(const DeferInterrupts&) = delete;
  DeferInterrupts& operator=(const DeferInterrupts&) = delete;
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
