#include "kwheel/base/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "kwheel/base/error.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace kwheel {

MappedFile::MappedFile(const std::filesystem::path& path) {
  // O_NONBLOCK: a FIFO must not hang the open; it is refused right after.
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) throw Error(ErrorKind::io, path.string() + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw Error(ErrorKind::io, path.string() + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw Error(ErrorKind::input, path.string() + ": not a regular file, cannot be a binary object");
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size == 0) return;  // mmap refuses length 0; an empty file is no bytes
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) throw Error(ErrorKind::io, path.string() + ": cannot map: " + std::strerror(errno));
  map_ = std::unique_ptr<void, Unmap>(p, Unmap{size});
}

void MappedFile::Unmap::operator()(void* addr) const { ::munmap(addr, size); }

std::span<const std::byte> MappedFile::bytes() const {
  if (!map_) return {};
  return {static_cast<const std::byte*>(map_.get()), map_.get_deleter().size};
}

}  // namespace kwheel
