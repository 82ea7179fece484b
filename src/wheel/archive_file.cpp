#include "kwheel/wheel/archive_file.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kwheel {

namespace {
// 256 KiB: 1,024 writes per 256 MB of wheel, and at --jobs 16 with one
// writer per wheel at most 4 MB of buffers (a 1 MiB buffer took peak RSS
// from 56 to 62 MB over 7 wheels on the GPU machine).
constexpr size_t kWriteSize = size_t{256} << 10;
// Pages are sent to disk each time this much more of the file is written.
constexpr uint64_t kSendEvery = uint64_t{8} << 20;
}  // namespace

struct ArchiveFile::Callback {
  static zip_int64_t call(void* self, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    auto& f = *static_cast<ArchiveFile*>(self);
    switch (cmd) {
      // A new archive: "no such file" makes libzip start an empty one.
      case ZIP_SOURCE_STAT: return f.fail(ZIP_ER_READ, ENOENT);
      case ZIP_SOURCE_BEGIN_WRITE: return f.begin() ? 0 : -1;
      case ZIP_SOURCE_WRITE: return f.write(data, len);
      case ZIP_SOURCE_SEEK_WRITE: return f.seek(data, len) ? 0 : -1;
      case ZIP_SOURCE_TELL_WRITE: return static_cast<zip_int64_t>(f.pos_);
      case ZIP_SOURCE_COMMIT_WRITE: return f.commit() ? 0 : -1;
      case ZIP_SOURCE_ROLLBACK_WRITE: f.close_fd(); return 0;
      case ZIP_SOURCE_REMOVE: return 0;  // an archive left empty: the caller removes its file
      case ZIP_SOURCE_FREE: return 0;
      case ZIP_SOURCE_ERROR: {
        zip_error_t e;
        zip_error_init_with_code(&e, f.zip_code_);
        e.sys_err = f.sys_code_;
        const zip_int64_t n = zip_error_to_data(&e, data, len);
        zip_error_fini(&e);
        return n;
      }
      case ZIP_SOURCE_SUPPORTS: return ZIP_SOURCE_SUPPORTS_WRITABLE;
      default: return f.fail(ZIP_ER_OPNOTSUPP, 0);  // reading: never asked of a new archive
    }
  }
};

ArchiveFile::ArchiveFile(std::filesystem::path path) : path_(std::move(path)) {}

ArchiveFile::~ArchiveFile() { close_fd(); }

zip_source* ArchiveFile::source(zip_error* error) { return zip_source_function_create(&Callback::call, this, error); }

int64_t ArchiveFile::fail(int zip_code, int sys) {
  zip_code_ = zip_code;
  sys_code_ = sys;
  return -1;
}

void ArchiveFile::close_fd() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool ArchiveFile::begin() {
  close_fd();
  fd_ = ::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd_ < 0) return fail(ZIP_ER_OPEN, errno), false;
  buf_.clear();
  buf_.reserve(kWriteSize);
  buf_at_ = pos_ = end_ = sent_ = 0;
  return true;
}

int64_t ArchiveFile::write(const void* data, uint64_t n) {
  // The buffer, when not empty, always ends at pos_: seek() flushes it.
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t at = pos_;
  for (uint64_t left = n; left > 0;) {
    if (buf_.empty()) buf_at_ = at;
    const size_t take = static_cast<size_t>(std::min<uint64_t>(left, kWriteSize - buf_.size()));
    buf_.insert(buf_.end(), p, p + take);
    p += take;
    at += take;
    left -= take;
    if (buf_.size() == kWriteSize && !flush()) return -1;
  }
  pos_ = at;
  end_ = std::max(end_, pos_);
  return static_cast<int64_t>(n);
}

bool ArchiveFile::seek(const void* args, uint64_t len) {
  zip_error_t e;
  zip_error_init(&e);
  const zip_int64_t to = zip_source_seek_compute_offset(pos_, end_, const_cast<void*>(args), len, &e);
  const int code = zip_error_code_zip(&e);
  zip_error_fini(&e);
  if (to < 0) return fail(code ? code : ZIP_ER_SEEK, EINVAL), false;
  if (!flush()) return false;
  pos_ = static_cast<uint64_t>(to);
  return true;
}

bool ArchiveFile::flush() {
  for (size_t done = 0; done < buf_.size();) {
    const ssize_t n = ::pwrite(fd_, buf_.data() + done, buf_.size() - done, static_cast<off_t>(buf_at_ + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail(ZIP_ER_WRITE, n < 0 ? errno : ENOSPC), false;
    done += static_cast<size_t>(n);
  }
  const uint64_t written = buf_at_ + buf_.size();
  buf_.clear();
  // Start the writeback of what the archive has grown by; an optimisation
  // only (the commit's fsync is the guarantee), so its failure is ignored.
  if (written >= sent_ + kSendEvery) {
    (void)::sync_file_range(fd_, static_cast<off_t>(sent_), static_cast<off_t>(written - sent_), SYNC_FILE_RANGE_WRITE);
    sent_ = written;
  }
  return true;
}

bool ArchiveFile::commit() {
  if (!flush()) return false;
  (void)::sync_file_range(fd_, static_cast<off_t>(sent_), 0, SYNC_FILE_RANGE_WRITE);
  const int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) return fail(ZIP_ER_CLOSE, errno), false;
  return true;
}

}  // namespace kwheel
