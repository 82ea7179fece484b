#include "kwheel/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "kwheel/error.hpp"

namespace kwheel {

TempDir::TempDir(std::string_view purpose) {
  const auto base = std::filesystem::temp_directory_path();
  std::string tmpl = (base / ("kwheel-" + std::string(purpose) + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw Error(ErrorKind::io, "cannot create a temporary directory under " + base.string() + ": " + std::strerror(errno) +
                                   "; set TMPDIR to a writable directory");
  path_ = tmpl;
}

TempDir::~TempDir() {
  if (keep_) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace kwheel
