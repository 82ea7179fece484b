#include "kwheel/wheel/deflate_scan.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <stdexcept>

namespace kwheel {
namespace {

// A table entry: the bits to consume (the code, plus the extra bits of a
// length or distance), what the code is, and, in the code-length table,
// its symbol.
enum Kind : uint16_t { kPlain = 0, kLength = 1, kEnd = 2, kInvalid = 3 };
constexpr uint16_t kInvalidEntry = kInvalid << 6;
// Marks a table slot whose code is longer than the table: bits 0 and kind
// plain, which no real code has.
constexpr uint16_t kLongEntry = 0;
// 2^10 two-byte entries: 2 KiB per table.
constexpr unsigned kFastBits = 10;

constexpr uint16_t entry(unsigned bits, Kind kind, unsigned symbol = 0) {
  return static_cast<uint16_t>(bits | kind << 6 | symbol << 8);
}
constexpr Kind kind_of(uint16_t e) { return static_cast<Kind>(e >> 6 & 3); }
constexpr unsigned bits_of(uint16_t e) { return e & 63; }

uint16_t litlen_entry(unsigned sym, unsigned len) {
  if (sym < 256) return entry(len, kPlain);
  if (sym == 256) return entry(len, kEnd);
  if (sym > 285) return kInvalidEntry;
  const unsigned extra = (sym < 265 || sym == 285) ? 0 : (sym - 261) / 4;
  return entry(len + extra, kLength);
}

uint16_t dist_entry(unsigned sym, unsigned len) {
  if (sym > 29) return kInvalidEntry;
  return entry(len + (sym < 4 ? 0 : sym / 2 - 1), kPlain);
}

uint16_t code_length_entry(unsigned sym, unsigned len) { return entry(len, kPlain, sym); }

unsigned reversed(unsigned code, unsigned len) {
  unsigned r = 0;
  for (unsigned i = 0; i < len; ++i, code >>= 1) r = r << 1 | (code & 1);
  return r;
}

[[noreturn]] void refuse(const char* why) { throw std::logic_error(std::string("deflate scan: ") + why); }

}  // namespace

// LSB-first reads from the stream; a peek past the end reads zeros, and
// the caller's position checks catch a stream that ends mid-block.
class DeflateScanner::Bits {
 public:
  explicit Bits(std::span<const unsigned char> s) : p_(s.data()), n_(s.size()) {}

  // At least 56 valid bits from the current position.
  uint64_t peek() const {
    const size_t i = pos_ >> 3;
    uint64_t v = 0;
    if (i + 8 <= n_) {
      std::memcpy(&v, p_ + i, 8);
      if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
    } else {
      for (size_t k = 0; i + k < n_ && k < 8; ++k) v |= uint64_t{p_[i + k]} << (8 * k);
    }
    return v >> (pos_ & 7);
  }
  uint64_t take(unsigned n) {
    const uint64_t v = peek() & ((uint64_t{1} << n) - 1);
    pos_ += n;
    return v;
  }
  void advance(size_t n) { pos_ += n; }
  void align() { pos_ = (pos_ + 7) & ~size_t{7}; }
  size_t pos() const { return pos_; }
  void check() const {
    if (pos_ > n_ * 8) refuse("the stream ends inside a block");
  }

 private:
  const unsigned char* p_;
  size_t n_;
  size_t pos_ = 0;
};

namespace {

// Canonical Huffman codes (RFC 1951 3.2.2) from their lengths: a table of
// the short codes, indexed by the next input bits (which hold each code
// reversed), and every entry in code order for the long ones.
template <class Table, class EntryOf>
void build(Table& t, std::span<const uint8_t> lens, EntryOf entry_of) {
  t.count.fill(0);
  for (uint8_t l : lens) ++t.count[l];
  t.count[0] = 0;
  int left = 1;
  for (unsigned len = 1; len < 16; ++len) {
    left = (left << 1) - static_cast<int>(t.count[len]);
    if (left < 0) refuse("over-subscribed code lengths");
  }
  const uint8_t max_len = lens.empty() ? 0 : *std::max_element(lens.begin(), lens.end());
  t.bits = std::clamp<unsigned>(max_len, 1, kFastBits);
  t.entries.assign(size_t{1} << t.bits, max_len > kFastBits ? kLongEntry : kInvalidEntry);
  std::array<unsigned, 16> next{}, offset{};
  for (unsigned len = 1, code = 0, at = 0; len < 16; ++len) {
    next[len] = code = (code + t.count[len - 1]) << 1;
    offset[len] = at;
    at += t.count[len];
  }
  t.by_code.assign(lens.size(), kInvalidEntry);
  for (unsigned sym = 0; sym < lens.size(); ++sym) {
    const unsigned len = lens[sym];
    if (len == 0) continue;
    const uint16_t e = entry_of(sym, len);
    t.by_code[offset[len]++] = e;
    const unsigned code = next[len]++;
    if (len > t.bits) continue;
    for (size_t k = reversed(code, len); k < t.entries.size(); k += size_t{1} << len) t.entries[k] = e;
  }
}

// A code longer than the table, decoded bit by bit (as zlib's puff does):
// canonical codes of one length are consecutive, so the code is found by
// its distance from the first code of its length.
template <class Table>
[[gnu::noinline, gnu::cold]] uint16_t decode_long(const Table& t, uint64_t v) {
  unsigned code = 0, first = 0, index = 0;
  for (unsigned len = 1; len < 16; ++len, v >>= 1) {
    code |= static_cast<unsigned>(v & 1);
    const unsigned n = t.count[len];
    if (code - first < n) return t.by_code[index + code - first];
    index += n;
    first = (first + n) << 1;
    code <<= 1;
  }
  return kInvalidEntry;
}

template <class Table>
[[gnu::always_inline]] inline uint16_t lookup(const Table& t, uint64_t v) {
  const uint16_t e = t.entries[v & ((uint64_t{1} << t.bits) - 1)];
  return e == kLongEntry ? decode_long(t, v) : e;
}

}  // namespace

DeflateScanner::DeflateScanner() {
  std::array<uint8_t, 288> litlen{};
  std::fill(litlen.begin(), litlen.begin() + 144, 8);
  std::fill(litlen.begin() + 144, litlen.begin() + 256, 9);
  std::fill(litlen.begin() + 256, litlen.begin() + 280, 7);
  std::fill(litlen.begin() + 280, litlen.end(), 8);
  build(fixed_litlen_, litlen, litlen_entry);
  std::array<uint8_t, 32> dist{};
  dist.fill(5);
  build(fixed_dist_, dist, dist_entry);
}

FinalBlock DeflateScanner::final_block(std::span<const unsigned char> stream) {
  Bits in(stream);
  for (;;) {
    const size_t header = in.pos();
    const uint64_t h = in.take(3);
    switch (h >> 1) {
      case 0: {  // stored: LEN bytes after the byte boundary
        in.align();
        const uint64_t len = in.take(16), nlen = in.take(16);
        if (len != (~nlen & 0xffff)) refuse("a stored block's LEN and NLEN disagree");
        in.advance(len * 8);
        break;
      }
      case 1:
        skip_codes(in, fixed_litlen_, fixed_dist_);
        break;
      case 2:
        read_dynamic_tables(in);
        skip_codes(in, litlen_, dist_);
        break;
      default:
        refuse("reserved block type");
    }
    in.check();
    if (h & 1) return FinalBlock{header, in.pos()};
  }
}

void DeflateScanner::read_dynamic_tables(Bits& in) {
  const unsigned hlit = static_cast<unsigned>(in.take(5)) + 257, hdist = static_cast<unsigned>(in.take(5)) + 1;
  const unsigned hclen = static_cast<unsigned>(in.take(4)) + 4;
  static constexpr std::array<uint8_t, 19> kOrder{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  std::array<uint8_t, 19> cl{};
  for (unsigned i = 0; i < hclen; ++i) cl[kOrder[i]] = static_cast<uint8_t>(in.take(3));
  build(lengths_, cl, code_length_entry);

  std::array<uint8_t, 320> lens{};
  const unsigned total = hlit + hdist;
  for (unsigned i = 0; i < total;) {
    const uint16_t e = lookup(lengths_, in.peek());
    if (kind_of(e) == kInvalid) refuse("invalid code-length code");
    in.advance(bits_of(e));
    const unsigned sym = e >> 8;
    if (sym < 16) {
      lens[i++] = static_cast<uint8_t>(sym);
      continue;
    }
    if (sym == 16 && i == 0) refuse("a repeat with no length before it");
    const uint8_t value = sym == 16 ? lens[i - 1] : 0;
    const unsigned repeat = sym == 16 ? 3 + in.take(2) : sym == 17 ? 3 + in.take(3) : 11 + in.take(7);
    if (i + repeat > total) refuse("code lengths overrun their count");
    std::fill_n(lens.begin() + i, repeat, value);
    i += repeat;
  }
  in.check();
  if (lens[256] == 0) refuse("no end-of-block code");
  build(litlen_, std::span<const uint8_t>(lens.data(), hlit), litlen_entry);
  build(dist_, std::span<const uint8_t>(lens.data() + hlit, hdist), dist_entry);
}

void DeflateScanner::skip_codes(Bits& in, const Table& litlen, const Table& dist) {
  for (;;) {
    // One load serves several codes: a length and its distance take at
    // most 15 + 5 + 15 + 13 = 48 bits, and a peek holds at least 56.
    uint64_t v = in.peek();
    unsigned used = 0;
    while (used <= 56 - 48) {
      const uint16_t e = lookup(litlen, v);
      unsigned n = bits_of(e);
      const Kind kind = kind_of(e);
      if (kind == kLength) {
        const uint16_t d = lookup(dist, v >> n);
        if (kind_of(d) != kPlain) refuse("invalid distance code");
        n += bits_of(d);
      } else if (kind == kInvalid) {
        refuse("invalid literal/length code");
      }
      v >>= n;
      used += n;
      if (kind == kEnd) {
        in.advance(used);
        return;
      }
    }
    in.advance(used);
    in.check();
  }
}

}  // namespace kwheel
