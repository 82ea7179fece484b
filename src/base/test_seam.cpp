#include "kwheel/base/test_seam.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>

namespace kwheel {

void note_wheel_read(const std::filesystem::path& wheel) {
  static const char* const log = std::getenv("KWHEEL_TEST_OPEN_LOG");
  if (!log || !*log) return;
  const std::string line = std::filesystem::absolute(wheel).string() + "\n";
  // O_APPEND: one write a line, whole, from any thread or process.
  const int fd = ::open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

void interrupt_point(const char* point, bool then_wait) {
  static const char* const at = std::getenv("KWHEEL_TEST_INTERRUPT_AT");
  static std::atomic<bool> fired{false};
  if (!at || std::strcmp(at, point) != 0 || fired.exchange(true)) return;
  ::kill(::getpid(), SIGINT);
  // Every thread blocks SIGINT (install_interrupt_cleanup): pause() returns
  // for no signal, and the cleanup thread ends the process.
  if (then_wait)
    for (;;) ::pause();
}

}  // namespace kwheel
