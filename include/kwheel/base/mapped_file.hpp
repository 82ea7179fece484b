#pragma once
// A file mapped read-only, for the binary readers (ELF, fatbin, Mach-O, PE):
// kernels' objects run to hundreds of MB, and a reader touches only the
// headers and tables it needs, so nothing is read into memory whole.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>

namespace kwheel {

// Movable, not copyable: the mapping goes with its owner.
class MappedFile {
 public:
  // Throws Error(io) when the file cannot be opened or mapped, Error(input)
  // when it is not a regular file (a FIFO named like a library must
  // neither hang nor pass).
  explicit MappedFile(const std::filesystem::path& path);

  std::span<const std::byte> bytes() const;

 private:
  struct Unmap {
    std::size_t size;
    void operator()(void* addr) const;
  };
  std::unique_ptr<void, Unmap> map_{nullptr, Unmap{0}};
};

}  // namespace kwheel
