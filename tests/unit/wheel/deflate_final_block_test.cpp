// ChunkDeflater joins libdeflate streams at the final-block positions that
// kwheel's addition to libdeflate 1.14 reports (third_party/libdeflate).
// Two independent references hold it to account: zlib's inflate(Z_BLOCK)
// walk must find the same final block in every stream, at every level, over
// random, repetitive, text and machine-code input; and Debian's own
// libdeflate 1.14 (libdeflate0, loaded with dlopen) must write the same
// bytes, so the addition changed nothing but what it reports.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <array>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

struct FinalBlock {
  size_t header_bit = 0;
  size_t end_bit = 0;
};

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
    if (ret != Z_OK && ret != Z_STREAM_END) {
      ADD_FAILURE() << "zlib: " << (z.msg ? z.msg : "?");
      break;
    }
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

// A stream from the built-in libdeflate, with the final block it reports.
std::pair<Bytes, FinalBlock> libdeflate_stream(const Bytes& in, int level) {
  std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c(libdeflate_alloc_compressor(level),
                                                                             libdeflate_free_compressor);
  Bytes out(libdeflate_deflate_compress_bound(c.get(), in.size()));
  out.resize(libdeflate_deflate_compress(c.get(), in.data(), in.size(), out.data(), out.size()));
  FinalBlock f;
  kwheel_libdeflate_final_block(c.get(), &f.header_bit, &f.end_bit);
  return {out, f};
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

std::vector<std::pair<std::string, Bytes>> inputs() {
  return {{"random", random_bytes(300000, 1)}, {"zeros", Bytes(1 << 20, 0)}, {"text", text(1 << 20)},
          {"machine code", machine_code(1 << 20)}, {"one byte", Bytes{42}}, {"empty", Bytes{}}};
}

// Debian's libdeflate 1.14, the unpatched upstream build.
class SystemLibdeflate {
 public:
  SystemLibdeflate() : handle_(dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL), close) {
    if (!handle_) return;
    alloc_ = reinterpret_cast<decltype(alloc_)>(dlsym(handle_.get(), "libdeflate_alloc_compressor"));
    compress_ = reinterpret_cast<decltype(compress_)>(dlsym(handle_.get(), "libdeflate_deflate_compress"));
    bound_ = reinterpret_cast<decltype(bound_)>(dlsym(handle_.get(), "libdeflate_deflate_compress_bound"));
    free_ = reinterpret_cast<decltype(free_)>(dlsym(handle_.get(), "libdeflate_free_compressor"));
  }
  bool loaded() const { return handle_ && alloc_ && compress_ && bound_ && free_; }
  Bytes compress(const Bytes& in, int level) const {
    void* c = alloc_(level);
    Bytes out(bound_(c, in.size()));
    out.resize(compress_(c, in.data(), in.size(), out.data(), out.size()));
    free_(c);
    return out;
  }

 private:
  static void close(void* h) { dlclose(h); }
  std::unique_ptr<void, void (*)(void*)> handle_;
  void* (*alloc_)(int) = nullptr;
  size_t (*compress_)(void*, const void*, size_t, void*, size_t) = nullptr;
  size_t (*bound_)(void*, size_t) = nullptr;
  void (*free_)(void*) = nullptr;
};

}  // namespace

TEST(LibdeflateFinalBlock, IsWhereZlibFindsItAtEveryLevel) {
  for (const auto& [name, data] : inputs())
    for (int level = 0; level <= 12; ++level) {
      const auto [stream, got] = libdeflate_stream(data, level);
      const FinalBlock want = zlib_final_block(stream);
      const std::string what = name + " level " + std::to_string(level);
      EXPECT_EQ(got.header_bit, want.header_bit) << what;
      EXPECT_EQ(got.end_bit, want.end_bit) << what;
      EXPECT_EQ((got.end_bit + 7) / 8, stream.size()) << what;
    }
}

TEST(LibdeflateFinalBlock, FollowsTheLastOfManyStoredBlocks) {
  // Incompressible input over UINT16_MAX is written as several stored
  // blocks, the final one last: at level 0 (no compression tried) and at 6.
  for (size_t n : {size_t{65535}, size_t{65536}, size_t{200000}})
    for (int level : {0, 6}) {
      const auto [stream, got] = libdeflate_stream(random_bytes(n, 3), level);
      const FinalBlock want = zlib_final_block(stream);
      EXPECT_EQ(got.header_bit, want.header_bit) << n << " bytes, level " << level;
      EXPECT_EQ(got.end_bit, want.end_bit) << n << " bytes, level " << level;
    }
}

TEST(LibdeflateFinalBlock, BytesAreThoseOfDebiansLibdeflate) {
  const SystemLibdeflate debian;
  ASSERT_TRUE(debian.loaded()) << "libdeflate.so.0 (Debian's libdeflate0, scripts/setup installs it) did not load";
  for (const auto& [name, data] : inputs())
    for (int level = 0; level <= 12; ++level)
      EXPECT_EQ(libdeflate_stream(data, level).first, debian.compress(data, level)) << name << " level " << level;
}
