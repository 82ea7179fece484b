#include "kwheel/base/progress.hpp"

#include <cstdio>

namespace kwheel {

Progress::Progress(bool enabled, std::string verb) : Progress(enabled, std::move(verb), stderr, [] { return Clock::now(); }) {}

Progress::Progress(bool enabled, std::string verb, std::FILE* out, std::function<Clock::time_point()> now)
    : enabled_(enabled), verb_(std::move(verb)), out_(out), now_(std::move(now)), start_(now_()) {}

Progress::~Progress() { finish(); }

void Progress::plan(uint64_t files, uint64_t bytes) {
  std::lock_guard lock(mu_);
  files_total_ += files;
  bytes_total_ += bytes;
  render(true);
}

void Progress::add_bytes(uint64_t n) {
  std::lock_guard lock(mu_);
  bytes_done_ += n;
  render(false);
}

void Progress::file_done() {
  std::lock_guard lock(mu_);
  ++files_done_;
  render(false);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (!enabled_ || !drawn_) return;
  render(true);
  std::fputs("\n", out_);
}

void Progress::render(bool force) {
  if (!enabled_) return;
  auto now = now_();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  double secs = std::chrono::duration<double>(now - start_).count();
  double mib = 1024.0 * 1024.0;
  std::fprintf(out_, "\r\033[K%s %llu/%llu files  %.1f/%.1f MiB  %.1f MiB/s", verb_.c_str(),
               static_cast<unsigned long long>(files_done_), static_cast<unsigned long long>(files_total_),
               bytes_done_ / mib, bytes_total_ / mib, secs > 0 ? bytes_done_ / mib / secs : 0.0);
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace kwheel
