#pragma once
// Files that become ready over time, waited for by other threads: a Hub
// build packs each variant as soon as its blobs are downloaded instead of
// after the last download. A failure (the download's exception) wakes every
// waiter, who rethrows it.
#include <condition_variable>
#include <exception>
#include <filesystem>
#include <mutex>
#include <set>
#include <vector>

namespace kwheel {

class FileGate {
 public:
  // Paths not named here are ready from the start.
  void set_pending(const std::vector<std::filesystem::path>& paths);
  void mark_ready(const std::filesystem::path& path);
  // Everything still pending is ready (the producer finished; files another
  // process wrote while we waited on its lock have no event of their own).
  void open_all();
  void fail(std::exception_ptr error);

  // Blocks until none of `paths` is pending; rethrows a failure.
  void wait(const std::vector<std::filesystem::path>& paths);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::set<std::filesystem::path> pending_;
  std::exception_ptr error_;
};

}  // namespace kwheel
