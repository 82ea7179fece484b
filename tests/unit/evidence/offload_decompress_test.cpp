// The payload decoders: zstd frames that are corrupt, cut off, want too
// large a window, or inflate past what their container declares (a bomb),
// and four threads decoding the largest windows within one budget.
#include "kwheel/evidence/offload_decompress.hpp"

#include <thread>

#include "kwheel/base/byte_budget.hpp"
#include "offload_bundle_fixture.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

// A frame that does not record its content size (a streaming writer that
// was not told it), holding `zeros` zero bytes: a zstd bomb when large.
Bytes zstd_stream_of_zeros(std::size_t zeros) {
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_compressionLevel, 1);
  const Bytes chunk(1 << 20);
  Bytes out(1 << 20);
  ZSTD_outBuffer o{out.data(), out.size(), 0};
  for (std::size_t left = zeros; left > 0;) {
    const std::size_t n = std::min(left, chunk.size());
    ZSTD_inBuffer i{chunk.data(), n, 0};
    while (i.pos < i.size) EXPECT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_continue)));
    left -= n;
  }
  ZSTD_inBuffer none{nullptr, 0, 0};
  while (ZSTD_compressStream2(cctx.get(), &o, &none, ZSTD_e_end) != 0) {
  }
  out.resize(o.pos);
  return out;
}

TEST(OffloadBundle, MalformedZstdBundles) {
  const Bytes plain = small_bundle();
  const Bytes frame = zstd_compress(plain);
  const Bytes v2 = ccob(2, 1, frame, plain);
  // 100 GiB declared: refused before anything is decompressed or allocated.
  expect_refused(patched<std::uint64_t>(ccob(3, 1, frame, plain), 16, std::uint64_t{100} << 30),
                 "declares 107374182400 bytes uncompressed");
  expect_refused(ccob(2, 1, as_bytes("this is no zstd frame"), plain), "holds a corrupt zstd frame (zstd: Unknown frame descriptor)");
  // A frame whose window (2^31) is past zstd's default cap (2^27): refused
  // by the decoder before it allocates anything of that size.
  expect_refused(ccob(2, 1, as_bytes(std::string("\x28\xb5\x2f\xfd\x00\xa8\x01\x00\x00", 9)), plain),
                 "holds a corrupt zstd frame (zstd: Frame requires too much memory for decoding)");
  for (std::uint16_t version : {1, 2, 3}) {
    expect_refused(ccob(version, 1, Bytes(frame.begin(), frame.end() - 3), plain), "is cut off inside its zstd frame");
    expect_refused(ccob(version, 1, Bytes(frame.begin(), frame.begin() + 3), plain), "is cut off inside its zstd frame");
  }
  expect_refused(ccob(2, 1, {}, plain), "is cut off inside its zstd frame");
  // The frame records its size: a container that says otherwise is refused
  // before decoding.
  expect_refused(patched<std::uint32_t>(v2, 12, 10), "holds a zstd frame of " + std::to_string(plain.size()) +
                                                         " bytes, but its header declares 10");
  Bytes trailing = frame;
  append(trailing, as_bytes("tail"));
  expect_refused(ccob(2, 1, trailing, plain), "holds 4 bytes after its zstd frame");
  expect_refused(ccob(3, 1, zstd_compress(as_bytes("hello")), as_bytes("hello")),
                 "decompressed, does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  for (std::size_t n = 1; n < v2.size(); ++n) expect_refused(Bytes(v2.begin(), v2.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

// A frame without a recorded size is decoded only as far as the container
// declares: 256 MiB of zeros in a few kilobytes stops after 1 MiB and a byte.
TEST(OffloadBundle, ZstdBombStopsAtTheDeclaredSize) {
  const Bytes bomb = zstd_stream_of_zeros(std::size_t{256} << 20);
  ASSERT_EQ(ZSTD_getFrameContentSize(bomb.data(), bomb.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  ASSERT_LT(bomb.size(), 64u * 1024);
  const Bytes one_mib(1 << 20);
  for (std::uint16_t version : {1, 2, 3}) {
    expect_refused(ccob(version, 1, bomb, one_mib), "decompresses to more than the 1048576 bytes its header declares");
  }
  // Short of its declared size: refused with what it held.
  const Bytes short_frame = zstd_stream_of_zeros(1000);
  expect_refused(ccob(2, 1, short_frame, one_mib), "decompresses to 1000 bytes, but its header declares 1048576");
}

// Issue 38, defect 4: a payload is streamed, never held. Four threads each
// decode a frame with zstd's largest window (2^27: written without a
// content size, so the decoder must keep the whole window) of a bundle
// padded to 64 MiB; the windows are reserved from the one budget of the
// run, so at most one is held at a time, and all four succeed (no thread
// waits on another that waits too).
TEST(OffloadBundle, ThreadsDecodingLargeWindowsShareOneBudget) {
  Bytes plain = small_bundle();
  plain.resize(std::size_t{64} << 20);  // code objects end well before: the rest is the last one's padding
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(cctx.get(), ZSTD_c_windowLog, 27);
  Bytes frame(1 << 20);
  ZSTD_outBuffer o{frame.data(), frame.size(), 0};
  ZSTD_inBuffer i{plain.data(), plain.size(), 0};
  while (i.pos < i.size) ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_continue)));
  while (ZSTD_compressStream2(cctx.get(), &o, &i, ZSTD_e_end) != 0) {
  }
  frame.resize(o.pos);
  ASSERT_EQ(ZSTD_getFrameContentSize(frame.data(), frame.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  const Bytes bundle = ccob(3, 1, frame, plain);
  std::vector<std::string> gfx(4);
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < gfx.size(); ++t) {
      threads.emplace_back([&, t] {
        const auto bundles = parse_offload_bundles(bundle, "big.so");
        gfx[t] = gfx_targets(bundles).at(0);
        EXPECT_EQ(bundles.at(0).targets.at(1).size, 4u);
      });
    }
  }
  EXPECT_EQ(gfx, std::vector<std::string>(4, "gfx90a"));
  EXPECT_GT(offload_decode_budget().peak_held(), std::uint64_t{1} << 27);
  EXPECT_LE(offload_decode_budget().peak_held(), kOffloadDecodeBudgetBytes);
}

}  // namespace
}  // namespace kwheel
