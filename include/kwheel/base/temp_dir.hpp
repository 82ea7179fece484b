#pragma once
// A private scratch directory, removed with everything in it when the
// object goes away or the process is interrupted (validate's venv,
// inspect's extracted objects, index's new site). Unlike TempPath
// (atomic_file.hpp) it is never renamed into place by itself. Its name
// carries the owner token (scratch_owner.hpp), and making one first sweeps
// what dead kwheel processes left in the same parent.
#include <filesystem>
#include <memory>
#include <string_view>

#include "kwheel/base/interrupt.hpp"
#include "kwheel/base/scratch_owner.hpp"

namespace kwheel {

class TempDir {
 public:
  // "$TMPDIR/kwheel-<purpose>-<token>-XXXXXX", mode 0700. Throws Error(io).
  explicit TempDir(std::string_view purpose = "tmp");
  // ".<leaf>.kwheel-<purpose>-<token>-XXXXXX" beside `target`, on its
  // filesystem, so that it can later be renamed over it.
  static TempDir beside(const std::filesystem::path& target, std::string_view purpose);
  TempDir(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }
  // Leave it on disk (--keep-env, debugging): renamed to
  // "…kwheel-<purpose>-kept-XXXXXX", which no sweep takes for stale.
  void keep();
  // It was renamed into place: no longer ours to remove.
  void release();

 private:
  TempDir(const std::filesystem::path& parent, const std::string& prefix, std::string_view purpose);
  std::unique_ptr<OwnerLease> lease_;
  std::filesystem::path path_;
  std::unique_ptr<RemoveOnInterrupt> on_interrupt_;
  bool keep_ = false;
};

}  // namespace kwheel
