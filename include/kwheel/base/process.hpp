#pragma once
// Running a child program (pip, python) with a bounded time and captured
// output. No child kwheel runs needs a secret, so none is passed: not in
// argv, which other users can read in /proc, and not in the environment,
// from which the variables kwheel reads secrets from are removed.
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

// Removed from every child's inherited environment: the Hub token, and the
// index password (alone or in a repository URL's user info).
inline constexpr const char* kSecretEnvironment[] = {"HF_TOKEN", "TWINE_PASSWORD", "TWINE_REPOSITORY_URL"};

// For a Python child whose result must prove the wheel alone: no user site,
// no PYTHONPATH/PYTHONHOME/PYTHONSTARTUP, no pip index or config from the
// caller's environment. `cwd` matters too: `python -c`/`-m` put the working
// directory first on sys.path, where a source checkout's img2gray/ would
// shadow the installed wheel.
ProcessOptions isolated_python(std::chrono::seconds timeout, std::optional<std::string> cwd = std::nullopt);

// Throws Error(io) when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

}  // namespace kwheel
