#pragma once
// Outputs appear whole or not at all: write to a hidden temp name in the
// destination directory (same filesystem, so rename is atomic), then
// commit() renames. A TempPath that is destroyed uncommitted removes itself,
// so an exception or a failed write leaves the directory as it was.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/scratch_owner.hpp"

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
  std::optional<OwnerLease> lease_;  // proves the temp is ours to a sweeping run (scratch_owner.hpp)
  RemoveOnInterrupt on_interrupt_;
};

// Writes `content` to `path` atomically (TempPath + commit). Throws Error(io).
void write_file_atomic(const std::filesystem::path& path, const std::string& content);

}  // namespace kwheel
