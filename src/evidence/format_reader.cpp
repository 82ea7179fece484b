#include "kwheel/evidence/format_reader.hpp"

#include <utility>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"

namespace kwheel {
namespace {

[[noreturn]] void refuse(std::string_view name, std::string_view format, const std::string& where, const std::string& what) {
  throw Error(ErrorKind::input, std::string(name) + ": malformed " + std::string(format) + ": " + where + what +
                                    "; rebuild it, or leave it out of the wheel");
}

ByteReader::Refusal past_the_end(std::string_view name, std::string_view format, std::string where, std::uint64_t size) {
  return [name, format, where = std::move(where), size](std::uint64_t off, std::uint64_t, std::string_view what) {
    refuse(name, format, where,
           std::string(what) + " at offset " + hex_offset(off) + " runs past the end of the " +
               (where.empty() ? "file" : "slice") + " (" + std::to_string(size) + " bytes)");
  };
}

}  // namespace

FormatReader::FormatReader(std::span<const std::byte> bytes, std::string_view name, std::string_view format)
    : FormatReader(bytes, name, format, "") {}

FormatReader::FormatReader(std::span<const std::byte> bytes, std::string_view name, std::string_view format, std::string where)
    : ByteReader(bytes, ByteOrder::little, past_the_end(name, format, where, bytes.size())),
      name_(name),
      format_(format),
      where_(std::move(where)) {}

void FormatReader::fail(const std::string& what) const { refuse(name_, format_, where_, what); }

FormatReader FormatReader::slice(std::uint64_t off, std::uint64_t len, std::string where) const {
  return FormatReader(bytes().subspan(off, len), name_, format_, std::move(where));
}

}  // namespace kwheel
