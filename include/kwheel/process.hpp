#pragma once
// Running a child program (pip, python) with a bounded time and captured
// output. Arguments go through argv and secrets only through the
// environment, never argv, which other users can read in /proc.
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kwheel {

struct ProcessResult {
  int exit_code = -1;        // -1 when killed by a signal or the timeout
  bool timed_out = false;
  int term_signal = 0;       // the signal that ended it, 0 if it exited
  std::string out;           // stdout (bounded)
  std::string err;           // stderr (bounded)
};

struct ProcessOptions {
  std::map<std::string, std::string> set_env;    // added/overridden
  std::vector<std::string> unset_env;            // removed from the inherited environment
  std::chrono::seconds timeout{600};
  size_t max_output = 4 << 20;                   // per stream; the tail is kept
  std::optional<std::string> cwd;
};

// Throws Error(io) when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace kwheel
