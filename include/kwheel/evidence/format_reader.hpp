#pragma once
// A ByteReader for one binary file of a named format (Mach-O, PE) that
// refuses with that format's message: "<file>: malformed <format>: <what>;
// rebuild it, or leave it out of the wheel". A read past the end names the
// field, its offset and the size of what was read from, so a report on a
// truncated download says where it was cut.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kwheel/base/byte_reader.hpp"

namespace kwheel {

class FormatReader : public ByteReader {
 public:
  // `name` (the file) and `format` must outlive the reader and its slices.
  FormatReader(std::span<const std::byte> bytes, std::string_view name, std::string_view format);

  std::string_view name() const { return name_; }
  [[noreturn]] void fail(const std::string& what) const;

  // The `len` bytes at `off` (checked by the caller) as a reader of their
  // own, whose refusals start with `where` ("slice 2 of 2 (arm64): ").
  FormatReader slice(std::uint64_t off, std::uint64_t len, std::string where) const;

 private:
  FormatReader(std::span<const std::byte> bytes, std::string_view name, std::string_view format, std::string where);

  std::string_view name_;
  std::string_view format_;
  std::string where_;
};

}  // namespace kwheel
