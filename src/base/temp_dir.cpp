#include "kwheel/base/temp_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "kwheel/base/error.hpp"

namespace kwheel {

TempDir::TempDir(std::string_view purpose) : TempDir(std::filesystem::temp_directory_path(), "", purpose) {}

TempDir TempDir::beside(const std::filesystem::path& target, std::string_view purpose) {
  const auto parent = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  return TempDir(parent, "." + target.filename().string() + ".", purpose);
}

TempDir::TempDir(const std::filesystem::path& parent, const std::string& prefix, std::string_view purpose) {
  lease_ = std::make_unique<OwnerLease>(parent);
  std::string tmpl = (parent / (prefix + OwnerLease::stem(purpose) + "XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw Error(ErrorKind::io, "cannot create a temporary directory in " + parent.string() + ": " + std::strerror(errno) +
                                   (prefix.empty() ? "; set TMPDIR to a writable directory" : "; check that the directory is writable"));
  path_ = tmpl;
  on_interrupt_ = std::make_unique<RemoveOnInterrupt>(path_);
}

TempDir::~TempDir() {
  if (keep_ || path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

TempDir::TempDir(TempDir&& other) noexcept
    : lease_(std::move(other.lease_)),
      path_(std::exchange(other.path_, {})),
      on_interrupt_(std::move(other.on_interrupt_)),
      keep_(other.keep_) {}

void TempDir::keep() {
  std::string name = path_.filename().string();
  const std::string& token = OwnerLease::token();
  if (auto at = name.find(token); at != std::string::npos) {
    name.replace(at, token.size(), "kept");
    const auto kept = path_.parent_path() / name;
    std::error_code ec;
    std::filesystem::rename(path_, kept, ec);
    if (ec) throw Error(ErrorKind::io, "cannot keep '" + path_.string() + "' as '" + kept.string() + "': " + ec.message());
    path_ = kept;
  }
  keep_ = true;
  on_interrupt_.reset();
}

void TempDir::release() {
  path_.clear();
  on_interrupt_.reset();
}

}  // namespace kwheel
