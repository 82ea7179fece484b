#pragma once
// Bounds-checked reads of fixed-width integers from one byte range, in the
// byte order its format declares. The binary readers (ELF, CUDA fatbin,
// Mach-O, PE, clang offload bundles) read every field of an untrusted file
// through one of these, so no offset taken from the file is ever
// dereferenced unchecked.
//
// What a read past the end means is the format's to say ("malformed ELF:
// ...", "offload bundle at 0x2000 is cut off: ..."): the reader hands the
// offset, length and field name to the refusal the format gave it, which
// throws the format's kwheel::Error.
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <utility>

namespace kwheel {

enum class ByteOrder { little, big };

class ByteReader {
 public:
  // Throws for the `len` bytes of `what` at `off` that are not all inside
  // the range. It must not return: a reader whose refusal returns throws
  // std::logic_error rather than read outside the range.
  using Refusal = std::function<void(std::uint64_t off, std::uint64_t len, std::string_view what)>;

  ByteReader(std::span<const std::byte> bytes, ByteOrder order, Refusal refuse)
      : bytes_(bytes), order_(order), refuse_(std::move(refuse)) {}

  std::span<const std::byte> bytes() const { return bytes_; }
  std::uint64_t size() const { return bytes_.size(); }
  ByteOrder order() const { return order_; }
  // Formats whose header declares the order (ELF's EI_DATA, a Mach-O magic)
  // read that header first, then switch.
  void set_order(ByteOrder order) { order_ = order; }

  // Whether [off, off + len) lies inside the range; no sum can wrap.
  bool contains(std::uint64_t off, std::uint64_t len) const { return off <= size() && len <= size() - off; }

  // The `len` bytes at `off`, refused unless all are inside the range.
  std::span<const std::byte> range(std::uint64_t off, std::uint64_t len, std::string_view what) const {
    require(off, len, what);
    return bytes_.subspan(off, len);
  }

  // The integer at `off` in the reader's byte order, refused unless all its
  // bytes are inside the range.
  template <std::integral T>
  T get(std::uint64_t off, std::string_view what) const {
    require(off, sizeof(T), what);
    using U = std::make_unsigned_t<T>;
    U v;
    std::memcpy(&v, bytes_.data() + off, sizeof v);
    const bool native = (order_ == ByteOrder::big) == (std::endian::native == std::endian::big);
    return static_cast<T>(native ? v : swap_bytes(v));
  }
  std::uint8_t u8(std::uint64_t off, std::string_view what) const { return get<std::uint8_t>(off, what); }
  std::uint16_t u16(std::uint64_t off, std::string_view what) const { return get<std::uint16_t>(off, what); }
  std::uint32_t u32(std::uint64_t off, std::string_view what) const { return get<std::uint32_t>(off, what); }
  std::uint64_t u64(std::uint64_t off, std::string_view what) const { return get<std::uint64_t>(off, what); }

 private:
  void require(std::uint64_t off, std::uint64_t len, std::string_view what) const {
    if (contains(off, len)) return;
    refuse_(off, len, what);
    throw std::logic_error("ByteReader: the refusal for a read past the end returned");
  }

  template <std::unsigned_integral U>
  static U swap_bytes(U v) {
    if constexpr (sizeof(U) == 1) {
      return v;
    } else if constexpr (sizeof(U) == 2) {
      return __builtin_bswap16(v);
    } else if constexpr (sizeof(U) == 4) {
      return __builtin_bswap32(v);
    } else {
      static_assert(sizeof(U) == 8);
      return __builtin_bswap64(v);
    }
  }

  std::span<const std::byte> bytes_;
  ByteOrder order_;
  Refusal refuse_;
};

}  // namespace kwheel
