#pragma once
// Outputs appear whole or not at all: write to a hidden temp name in the
// destination directory (same filesystem, so rename is atomic), then
// commit() renames. A TempPath that is destroyed uncommitted removes itself,
// so an exception or a failed write leaves the directory as it was.
#include <filesystem>
#include <string>

namespace kwheel {

class TempPath {
 public:
  explicit TempPath(std::filesystem::path final_path);
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;
  ~TempPath();

  const std::filesystem::path& path() const { return temp_; }
  const std::filesystem::path& final_path() const { return final_; }
  // fsyncs the temp file and renames it over the final path. Throws Error(io).
  void commit();

 private:
  std::filesystem::path final_;
  std::filesystem::path temp_;
  bool committed_ = false;
  int slot_ = -1;  // registration for the signal handler
};

// Writes `content` to `path` atomically (TempPath + commit). Throws Error(io).
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

// On SIGINT/SIGTERM/SIGHUP, removes every live TempPath before the process
// dies of the signal, so an interrupted build leaves no partial output.
void install_temp_cleanup_on_signals();

// Removes temp files in `dir` left by kwheel processes that no longer exist
// (killed with SIGKILL, power loss), including libzip's own temp files
// beside them. Files of live processes are left alone.
void sweep_stale_temps(const std::filesystem::path& dir);

}  // namespace kwheel
