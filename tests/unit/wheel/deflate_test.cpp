// ChunkDeflater's joined stream must be one valid DEFLATE stream: zlib's
// inflate (an independent decoder) reads it back to the input, for chunk
// sizes that put the end of each piece at every bit offset, empty chunks,
// incompressible and repetitive data, and real machine code.
#include "kwheel/wheel/deflate.hpp"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>

#include <cstring>
#include <zlib.h>

#include <fstream>
#include <random>

using namespace kwheel;

namespace {

std::vector<unsigned char> inflate_all(const std::vector<unsigned char>& in, size_t expect) {
  z_stream z{};
  EXPECT_EQ(inflateInit2(&z, -MAX_WBITS), Z_OK);
  std::vector<unsigned char> out(expect + 16);
  z.next_in = const_cast<unsigned char*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int ret = inflate(&z, Z_FINISH);
  EXPECT_EQ(ret, Z_STREAM_END) << (z.msg ? z.msg : "");
  EXPECT_EQ(z.avail_in, 0u) << "bytes after the end of the stream";
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// Compresses `data` in pieces of `chunk` bytes (the last may be empty when
// `trailing_empty`) and returns the joined stream.
std::vector<unsigned char> deflate_in_chunks(ChunkDeflater& d, const std::vector<unsigned char>& data, size_t chunk,
                                             bool trailing_empty = false) {
  std::vector<unsigned char> joined, piece;
  const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
  size_t off = 0;
  do {
    const size_t n = std::min(chunk, data.size() - off);
    const bool last = off + n == data.size() && !trailing_empty;
    d.compress({bytes + off, n}, last, piece);
    joined.insert(joined.end(), piece.begin(), piece.end());
    off += n;
  } while (off < data.size());
  if (trailing_empty) {
    d.compress({}, true, piece);
    joined.insert(joined.end(), piece.begin(), piece.end());
  }
  return joined;
}

std::vector<unsigned char> mixed_data(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (i / 997) % 3 == 0 ? static_cast<unsigned char>(rng()) : "kwheel"[i % 6];
  return v;
}

}  // namespace

TEST(ChunkDeflater, JoinedChunksInflateToTheInput) {
  for (int level : {1, 6, 9, 12}) {
    ChunkDeflater d(level);
    const auto data = mixed_data(200000, static_cast<unsigned>(level));
    // Many chunk sizes: the final block of a piece ends at varied bit offsets.
    for (size_t chunk : {1ul, 7ul, 100ul, 4093ul, 65536ul, 200000ul, 300000ul}) {
      SCOPED_TRACE("level " + std::to_string(level) + " chunk " + std::to_string(chunk));
      EXPECT_EQ(inflate_all(deflate_in_chunks(d, data, chunk), data.size()), data);
      EXPECT_EQ(inflate_all(deflate_in_chunks(d, data, chunk, true), data.size()), data);
    }
  }
}

TEST(ChunkDeflater, EveryEndBitOffsetIsJoinedCorrectly) {
  // Small random pieces end at each of the 8 bit offsets many times over.
  ChunkDeflater d(6);
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<unsigned char> data(1 + rng() % 300);
    for (auto& b : data) b = static_cast<unsigned char>(rng() % (round % 2 ? 256 : 4));
    EXPECT_EQ(inflate_all(deflate_in_chunks(d, data, 1 + rng() % 64), data.size()), data) << "round " << round;
  }
}

TEST(ChunkDeflater, EmptyStreamIsValid) {
  ChunkDeflater d(6);
  std::vector<unsigned char> out;
  d.compress({}, true, out);
  EXPECT_TRUE(inflate_all(out, 0).empty());
}

TEST(ChunkDeflater, MachineCodeCompressesLikeZlib) {
  // A real shared library (this test binary's own libc, present everywhere;
  // not the test binary, whose bytes change with every build): chunked
  // libdeflate must not be more than 1 % larger than one zlib -6 stream
  // over the same bytes.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &info), 0);  // not memcpy: a sanitizer intercepts it
  std::ifstream f(info.dli_fname, std::ios::binary);
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(f)), {});
  ASSERT_GT(data.size(), 3 * kDeflateChunk / 4);
  ChunkDeflater d(6);
  const auto joined = deflate_in_chunks(d, data, kDeflateChunk / 4);
  EXPECT_EQ(inflate_all(joined, data.size()), data);
  uLongf zsize = compressBound(data.size());
  std::vector<unsigned char> z(zsize);
  ASSERT_EQ(compress2(z.data(), &zsize, data.data(), data.size(), 6), Z_OK);
  EXPECT_LT(static_cast<double>(joined.size()), 1.01 * static_cast<double>(zsize));
}

TEST(ChunkDeflater, OutputIsDeterministic) {
  const auto data = mixed_data(3 * 70000, 3);
  ChunkDeflater a(6), b(6);
  EXPECT_EQ(deflate_in_chunks(a, data, 70000), deflate_in_chunks(b, data, 70000));
}

TEST(ChunkDeflater, Crc32MatchesZlib) {
  const auto data = mixed_data(100001, 5);
  const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
  uint32_t crc = crc32_update(0, {bytes, 40000});
  crc = crc32_update(crc, {bytes + 40000, data.size() - 40000});
  EXPECT_EQ(crc, ::crc32(0, data.data(), static_cast<uInt>(data.size())));
}

TEST(ChunkDeflater, RejectsLevelsOutsideLibdeflatesRange) {
  EXPECT_THROW(ChunkDeflater(0), std::invalid_argument);
  EXPECT_THROW(ChunkDeflater(13), std::invalid_argument);
}
