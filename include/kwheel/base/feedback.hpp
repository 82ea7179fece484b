#pragma once
#include <functional>
#include <string>

namespace kwheel {

// How the library talks to whoever drives it while it works: one-line
// notes and warnings as they happen, and whether downloads draw progress.
// The front-end decides where they go (the CLI: stderr, unless --quiet).
struct Feedback {
  std::function<void(const std::string&)> on_info;
  std::function<void(const std::string&)> on_warn;
  bool progress = false;
  void info(const std::string& line) const {
    if (on_info) on_info(line);
  }
  void warn(const std::string& line) const {
    if (on_warn) on_warn(line);
  }
};

}  // namespace kwheel
