// DeflateScanner must find the block boundaries zlib finds: zlib's
// inflate(Z_BLOCK) walk (the independent reference, and what kwheel used
// before) is run over the same streams, from libdeflate at every level and
// from zlib itself (stored, fixed-Huffman and multi-block streams), over
// random, repetitive, text and machine-code input. Streams that are not
// deflate are refused, never scanned past their end.
#include "kwheel/wheel/deflate_scan.hpp"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <array>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace kwheel;

namespace {

using Bytes = std::vector<unsigned char>;

// Every block boundary zlib reports, in bits; the last pair is the final
// block's header and end.
FinalBlock zlib_final_block(const Bytes& stream) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, -MAX_WBITS), Z_OK);
  std::array<unsigned char, 1 << 16> sink{};
  z.next_in = const_cast<unsigned char*>(stream.data());
  z.avail_in = static_cast<uInt>(stream.size());
  FinalBlock f;
  for (;;) {
    z.next_out = sink.data();
    z.avail_out = static_cast<uInt>(sink.size());
    const int ret = inflate(&z, Z_BLOCK);
    if (ret != Z_OK && ret != Z_STREAM_END) ADD_FAILURE() << "zlib: " << (z.msg ? z.msg : "?");
    if (ret != Z_OK && ret != Z_STREAM_END) break;
    if (!(z.data_type & 128)) continue;
    const size_t bit = (stream.size() - z.avail_in) * 8 - static_cast<size_t>(z.data_type & 7);
    if (z.data_type & 64) {
      f.end_bit = bit;
      break;
    }
    f.header_bit = bit;
  }
  inflateEnd(&z);
  return f;
}

Bytes libdeflate_stream(const Bytes& in, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  Bytes out(libdeflate_deflate_compress_bound(c, in.size()));
  out.resize(libdeflate_deflate_compress(c, in.data(), in.size(), out.data(), out.size()));
  libdeflate_free_compressor(c);
  return out;
}

Bytes zlib_stream(const Bytes& in, int level, int strategy, size_t flush_every = 0) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, strategy), Z_OK);
  Bytes out(deflateBound(&z, in.size()) + 64 * (in.size() / (flush_every ? flush_every : in.size() + 1) + 1));
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  size_t off = 0;
  do {
    const size_t n = flush_every ? std::min(flush_every, in.size() - off) : in.size() - off;
    z.next_in = const_cast<unsigned char*>(in.data() + off);
    z.avail_in = static_cast<uInt>(n);
    off += n;
    // A full flush mid-stream ends a block where zlib would not have.
    EXPECT_NE(deflate(&z, off == in.size() ? Z_FINISH : Z_FULL_FLUSH), Z_STREAM_ERROR);
  } while (off < in.size());
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

Bytes random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& c : b) c = static_cast<unsigned char>(rng());
  return b;
}

Bytes text(size_t n) {
  static const std::string words[] = {"kernel ", "wheel ", "torch ", "cuda ", "variant ", "metadata ", "\n", "sm_90 "};
  std::mt19937 rng(7);
  Bytes b;
  while (b.size() < n) {
    const auto& w = words[rng() % 8];
    b.insert(b.end(), w.begin(), w.end());
  }
  b.resize(n);
  return b;
}

Bytes machine_code(size_t n) {
  std::ifstream f("/proc/self/exe", std::ios::binary);
  Bytes b((std::istreambuf_iterator<char>(f)), {});
  b.resize(std::min(n, b.size()));
  return b;
}

void expect_like_zlib(const Bytes& stream, const std::string& what) {
  DeflateScanner scanner;
  const FinalBlock want = zlib_final_block(stream);
  const FinalBlock got = scanner.final_block(stream);
  EXPECT_EQ(got.header_bit, want.header_bit) << what;
  EXPECT_EQ(got.end_bit, want.end_bit) << what;
  EXPECT_EQ((got.end_bit + 7) / 8, stream.size()) << what;
}

}  // namespace

TEST(DeflateScanner, FindsZlibsFinalBlockInLibdeflateStreamsAtEveryLevel) {
  const std::vector<std::pair<std::string, Bytes>> inputs = {
      {"random", random_bytes(300000, 1)}, {"zeros", Bytes(1 << 20, 0)},        {"text", text(1 << 20)},
      {"machine code", machine_code(1 << 20)}, {"one byte", Bytes{42}},         {"empty", Bytes{}}};
  for (const auto& [name, data] : inputs)
    for (int level = 1; level <= 12; ++level)
      expect_like_zlib(libdeflate_stream(data, level), name + " level " + std::to_string(level));
}

TEST(DeflateScanner, ReadsStoredFixedAndManyBlockStreamsFromZlib) {
  const Bytes code = machine_code(400000);
  expect_like_zlib(zlib_stream(code, 0, Z_DEFAULT_STRATEGY), "stored");
  expect_like_zlib(zlib_stream(code, 6, Z_FIXED), "fixed Huffman");
  expect_like_zlib(zlib_stream(code, 6, Z_HUFFMAN_ONLY), "literals only");
  expect_like_zlib(zlib_stream(code, 6, Z_RLE), "run lengths");
  expect_like_zlib(zlib_stream(code, 9, Z_DEFAULT_STRATEGY, 1000), "a block every 1000 bytes");
  expect_like_zlib(zlib_stream(random_bytes(70000, 2), 6, Z_DEFAULT_STRATEGY, 65535), "stored blocks of random bytes");
}

TEST(DeflateScanner, RefusesWhatIsNotACompleteStream) {
  DeflateScanner scanner;
  const Bytes stream = libdeflate_stream(text(200000), 6);
  // Cut short: every scan must stop at the end of the bytes, not read on.
  for (size_t cut : {size_t{0}, size_t{1}, stream.size() / 2, stream.size() - 1})
    EXPECT_THROW(scanner.final_block(Bytes(stream.begin(), stream.begin() + static_cast<long>(cut))), std::logic_error)
        << "cut at " << cut;
  EXPECT_THROW(scanner.final_block(Bytes{0x07}), std::logic_error) << "reserved block type 3";
  EXPECT_THROW(scanner.final_block(Bytes{0x01, 0x05, 0x00, 0x00, 0x00}), std::logic_error) << "LEN and NLEN disagree";
  // A scanner that refused one stream still reads the next.
  EXPECT_EQ(scanner.final_block(stream).end_bit, zlib_final_block(stream).end_bit);
}
