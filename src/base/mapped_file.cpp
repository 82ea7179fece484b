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
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) return;
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (p == MAP_FAILED) throw Error(ErrorKind::io, path.string() + ": cannot map: " + std::strerror(errno));
  addr_ = p;
}

MappedFile::~MappedFile() {
  if (addr_ != nullptr) ::munmap(addr_, size_);
}

std::span<const std::byte> MappedFile::bytes() const {
  if (addr_ == nullptr) return {};
  return {static_cast<const std::byte*>(addr_), size_};
}

}  // namespace kwheel
