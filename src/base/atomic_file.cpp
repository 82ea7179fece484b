#include "kwheel/base/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

std::atomic<unsigned> g_counter{0};

void fsync_path(const std::filesystem::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

TempPath::TempPath(std::filesystem::path final_path)
    : final_(std::move(final_path)),
      temp_(final_.parent_path() / ("." + final_.filename().string() + "." + OwnerLease::stem("tmp") + std::to_string(g_counter.fetch_add(1)))),
      lease_(std::in_place, final_.parent_path()),
      on_interrupt_(temp_, /*suffixed_siblings=*/true) {}

TempPath::~TempPath() {
  if (!committed_) {
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void TempPath::commit() {
  fsync_path(temp_);
  if (::rename(temp_.c_str(), final_.c_str()) != 0)
    throw Error(ErrorKind::io, "cannot move '" + temp_.string() + "' to '" + final_.string() + "': " + std::strerror(errno));
  committed_ = true;
  on_interrupt_.release();
  lease_.reset();  // nothing of ours is left there: the lock goes with the last lease
}

void write_file_atomic(const std::filesystem::path& path, const std::string& content) {
  TempPath tmp(path);
  {
    std::ofstream out(tmp.path(), std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) throw Error(ErrorKind::io, "cannot write '" + path.string() + "': " + std::strerror(errno));
  }
  tmp.commit();
}

}  // namespace kwheel
