#pragma once
// Where the final block of a raw DEFLATE stream (RFC 1951) starts and ends,
// at bit precision. ChunkDeflater needs both to turn a complete libdeflate
// stream into a piece that later chunks can follow: it clears that block's
// BFINAL bit and byte-aligns the end.
//
// The scan decodes Huffman codes only to learn their lengths: it writes no
// output and copies no matches, where zlib's Z_BLOCK walk, which this
// replaced, inflated every chunk in full (docs/performance.md has what each
// cost). The block boundaries it reports are the ones zlib reports, tested
// against it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kwheel {

struct FinalBlock {
  size_t header_bit = 0;  // the final block's BFINAL bit
  size_t end_bit = 0;     // one past its end-of-block code
};

class DeflateScanner {
 public:
  DeflateScanner();
  // Throws std::logic_error when `stream` is not a complete, valid raw
  // DEFLATE stream: the scanner only ever reads what libdeflate just wrote,
  // so a refusal is a bug, not bad input.
  FinalBlock final_block(std::span<const unsigned char> stream);

 private:
  // Codes up to kFastBits long are looked up by the next input bits in
  // `entries` (small enough to stay in L1); longer, rarer ones are decoded
  // canonically from `count` and `by_code` (entries in code order).
  struct Table {
    std::vector<uint16_t> entries;
    unsigned bits = 0;
    std::array<uint16_t, 16> count{};
    std::vector<uint16_t> by_code;
  };
  class Bits;

  void read_dynamic_tables(Bits& in);
  void skip_codes(Bits& in, const Table& litlen, const Table& dist);

  Table fixed_litlen_, fixed_dist_, litlen_, dist_, lengths_;
};

}  // namespace kwheel
