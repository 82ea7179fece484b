#pragma once
// Running a child program (pip, python) with a bounded time and captured
// output. A child gets no secret it was not given on purpose: none in argv,
// which other users can read in /proc, and none inherited, as every
// variable of base/secret_environment's list is removed from what it
// inherits. What a caller sets in `set_env` is given on purpose: the index
// login uv and pip get (hub/child_tool_access), nothing else.
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

// For a Python child whose result must prove the wheel alone: no user site,
// no PYTHONPATH/PYTHONHOME/PYTHONSTARTUP, no pip index or config from the
// caller's environment. `cwd` matters too: `python -c`/`-m` put the working
// directory first on sys.path, where a source checkout's img2gray/ would
// shadow the installed wheel.
ProcessOptions isolated_python(std::chrono::seconds timeout, std::optional<std::string> cwd = std::nullopt);

// Throws Error(io) when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace kwheel
