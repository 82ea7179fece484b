#pragma once
// One status line for long work, redrawn in place on a terminal at most ten
// times a second; silent when disabled (not a TTY, --quiet, --json).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>

namespace kwheel {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  // Draws on stderr by the steady clock.
  Progress(bool enabled, std::string verb);
  // Draws on `out` by `now`: lets a test read the line and step time.
  Progress(bool enabled, std::string verb, std::FILE* out, std::function<Clock::time_point()> now);
  ~Progress();
  void plan(uint64_t files, uint64_t bytes);
  void add_bytes(uint64_t n);
  void file_done();
  void finish();  // final redraw and newline

 private:
  void render(bool force);
  bool enabled_;
  std::string verb_;
  std::FILE* out_;
  std::function<Clock::time_point()> now_;
  std::mutex mu_;
  uint64_t files_total_ = 0, files_done_ = 0, bytes_total_ = 0, bytes_done_ = 0;
  Clock::time_point start_, last_draw_{};
  bool drawn_ = false, finished_ = false;
};

}  // namespace kwheel
