#include "kwheel/base/file_gate.hpp"

#include <algorithm>

namespace kwheel {

void FileGate::set_pending(const std::vector<std::filesystem::path>& paths) {
  std::lock_guard lock(mutex_);
  pending_.insert(paths.begin(), paths.end());
}

void FileGate::mark_ready(const std::filesystem::path& path) {
  {
    std::lock_guard lock(mutex_);
    pending_.erase(path);
  }
  changed_.notify_all();
}

void FileGate::open_all() {
  {
    std::lock_guard lock(mutex_);
    pending_.clear();
  }
  changed_.notify_all();
}

void FileGate::fail(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::move(error);
  }
  changed_.notify_all();
}

void FileGate::wait(const std::vector<std::filesystem::path>& paths) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] {
    return error_ || std::none_of(paths.begin(), paths.end(), [&](const auto& p) { return pending_.count(p) > 0; });
  });
  if (error_) std::rethrow_exception(error_);
}

}  // namespace kwheel
