#pragma once
// A file mapped read-only, for the binary readers (ELF, fatbin, Mach-O, PE):
// kernels' objects run to hundreds of MB, and a reader touches only the
// headers and tables it needs, so nothing is read into memory whole.
#include <cstddef>
#include <filesystem>
#include <span>

namespace kwheel {

class MappedFile {
 public:
  // Throws Error(io) when the file cannot be opened or mapped, Error(input)
  // when it is not a regular file (a FIFO named like a library must
  // neither hang nor pass).
  explicit MappedFile(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const;

 private:
  void* addr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kwheel
