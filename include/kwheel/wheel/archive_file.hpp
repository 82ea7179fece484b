#pragma once
// The file a wheel's archive is written into, as libzip's archive source:
// libzip writes the archive straight into the given file, in 256 KiB writes,
// and the file's pages are sent to disk while it grows.
//
// libzip's own file source writes a temp file of its own in 4 KiB pieces
// and renames it over the path at zip_close. On ext4 a rename over an
// existing file first waits for the renamed file's blocks to be allocated
// (auto_da_alloc): 0.1-0.5 s per 350 MB wheel on the GPU machine, after
// the last chunk was compressed, with every worker idle (docs/performance.md).
// Sent to disk as it is written, a wheel is mostly there when the build's
// commit fsyncs it.
#include <cstdint>
#include <filesystem>
#include <vector>

struct zip_source;
struct zip_error;

namespace kwheel {

class ArchiveFile {
 public:
  // `path` must exist (the caller creates it, exclusively); it is truncated
  // when libzip begins writing.
  explicit ArchiveFile(std::filesystem::path path);
  ~ArchiveFile();
  ArchiveFile(const ArchiveFile&) = delete;
  ArchiveFile& operator=(const ArchiveFile&) = delete;

  // A source for zip_open_from_source(ZIP_CREATE | ZIP_TRUNCATE), which
  // owns it once that succeeds; this object must outlive it. Null on error.
  zip_source* source(zip_error* error);

 private:
  struct Callback;
  bool begin();
  int64_t write(const void* data, uint64_t n);
  bool seek(const void* args, uint64_t len);
  bool flush();
  bool commit();
  void close_fd() noexcept;
  int64_t fail(int zip_code, int sys);

  std::filesystem::path path_;
  int fd_ = -1;
  std::vector<unsigned char> buf_;  // the bytes of [buf_at_, buf_at_ + size)
  uint64_t buf_at_ = 0, pos_ = 0, end_ = 0, sent_ = 0;
  int zip_code_ = 0, sys_code_ = 0;
};

}  // namespace kwheel
