#pragma once
// A private scratch directory under $TMPDIR, removed with everything in it
// when the object goes away (validate's venv, inspect's extracted objects).
// Unlike TempPath (atomic_file.hpp) nothing here is ever committed.
#include <filesystem>
#include <string_view>

namespace kwheel {

class TempDir {
 public:
  // "kwheel-<purpose>-XXXXXX", mode 0700. Throws Error(io).
  explicit TempDir(std::string_view purpose = "tmp");
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::filesystem::path& path() const { return path_; }
  // Leave it on disk (--keep-env, debugging).
  void keep() { keep_ = true; }

 private:
  std::filesystem::path path_;
  bool keep_ = false;
};

}  // namespace kwheel
