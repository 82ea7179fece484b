// The CCOB container: what clang 18+'s bundler writes with -compress, and
// LLVM's layout of versions 1-3 around zlib and zstd, alone and mixed with
// uncompressed bundles in one section; and its headers broken in each way
// the reader must refuse.
#include "kwheel/evidence/offload_compressed.hpp"

#include "offload_bundle_fixture.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

// clang-offload-bundler -compress (LLVM 18+; Debian's clang-19). It
// compresses with zstd where LLVM was built with it, as Debian's is.
std::string find_compressing_bundler() {
  for (int v = 30; v >= 18; --v) {
    const std::string p = "/usr/lib/llvm-" + std::to_string(v) + "/bin/clang-offload-bundler";
    if (fs::exists(p)) return p;
  }
  return "";
}

// What clang-offload-bundler -compress writes (clang 14 cannot): the same
// bundle in each CCOB version, alone and mixed with others in one section.
TEST(OffloadBundle, ZlibCompressedBundlesInEveryVersion) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const auto entries = hip_entries(d);
  const Bytes plain = bundle_with_tool(d, "fat.hipfb", entries);
  for (std::uint16_t version : {1, 2, 3}) {
    const auto bundles = parse_offload_bundles(zlib_ccob(version, plain), "ccob.so");
    ASSERT_EQ(bundles.size(), 1u) << version;
    EXPECT_TRUE(bundles[0].compressed);
    expect_hip_entries(bundles[0], entries);
  }
  // Version 1 records no total size: its zlib stream's end must be found.
  Bytes section = zlib_ccob(1, plain);
  pad_to(section, 4096);
  const std::vector<Entry> other = {kHost, {"hipv4-amdgcn-amd-amdhsa--gfx1201", "gfx1201 stand-in"}};
  append(section, zlib_ccob(2, write_bundle(other)));
  pad_to(section, 4096);
  append(section, write_bundle(other));
  pad_to(section, 4096);
  const auto bundles = parse_offload_bundles(section, "mixed.so");
  ASSERT_EQ(bundles.size(), 3u);
  EXPECT_TRUE(bundles[0].compressed);
  EXPECT_TRUE(bundles[1].compressed);
  EXPECT_FALSE(bundles[2].compressed);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx1201", "gfx908", "gfx90a", "gfx942"}));
}

// Debian's clang-19 bundler with -compress: a zstd CCOB version 2, as
// ROCm 6.4 and 7.0 ship them. Its frame, put in versions 1 and 3 as well,
// is read the same.
TEST(OffloadBundle, ZstdCompressedByTheBundler) {
  const std::string bundler = find_compressing_bundler();
  REQUIRE_TOOL(bundler, "clang-offload-bundler 18+ (Debian's clang-19)");
  TempDir d;
  // The host as clang 20+ names it to the bundler; LLVM 19 stores it with
  // the empty environment's '-', as the ROCm objects carry it.
  auto entries = hip_entries(d);
  entries[0].id = "host-x86_64-unknown-linux-gnu";
  const Bytes plain = bundle_with_tool(d, "fat.hipfb", entries, "o", bundler);
  const Bytes packed = bundle_with_tool(d, "fat.ccob", entries, "o", bundler, " -compress");
  entries[0].id = kHost.id;
  ASSERT_EQ(std::memcmp(packed.data(), "CCOB", 4), 0);
  ASSERT_EQ(peek<std::uint16_t>(packed, 6), 1u) << "the bundler did not use zstd";
  const auto bundles = parse_offload_bundles(packed, "fat.ccob");
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_TRUE(bundles[0].compressed);
  expect_hip_entries(bundles[0], entries);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx908", "gfx90a", "gfx942"}));

  const std::uint16_t version = peek<std::uint16_t>(packed, 4);
  const std::size_t header = version == 3 ? 32 : 24;
  const Bytes frame(packed.begin() + static_cast<std::ptrdiff_t>(header), packed.end());
  for (std::uint16_t v : {1, 2, 3}) {
    const auto again = parse_offload_bundles(ccob(v, 1, frame, plain), "fat.ccob");
    ASSERT_EQ(again.size(), 1u) << v;
    expect_hip_entries(again[0], entries);
  }
}

// Both methods in every version, alone and mixed in one section: a
// version 1 zstd container ends where its frame ends.
TEST(OffloadBundle, ZstdCompressedBundlesInEveryVersion) {
  TempDir d;
  const auto entries = hip_entries(d);
  const Bytes plain = write_bundle(entries);
  for (std::uint16_t version : {1, 2, 3}) {
    const auto bundles = parse_offload_bundles(zstd_ccob(version, plain), "ccob.so");
    ASSERT_EQ(bundles.size(), 1u) << version;
    EXPECT_TRUE(bundles[0].compressed);
    expect_hip_entries(bundles[0], entries);
  }
  Bytes section = zstd_ccob(1, plain);
  pad_to(section, 4096);
  const std::vector<Entry> other = {kHost, {"hipv4-amdgcn-amd-amdhsa--gfx1201", "gfx1201 stand-in"}};
  append(section, zlib_ccob(1, write_bundle(other)));
  pad_to(section, 4096);
  append(section, zstd_ccob(3, write_bundle({kHost, {"hipv4-amdgcn-amd-amdhsa--gfx950", "gfx950 stand-in"}})));
  append(section, write_bundle(other));
  const auto bundles = parse_offload_bundles(section, "mixed.so");
  ASSERT_EQ(bundles.size(), 4u);
  EXPECT_TRUE(bundles[0].compressed && bundles[1].compressed && bundles[2].compressed);
  EXPECT_FALSE(bundles[3].compressed);
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx1201", "gfx908", "gfx90a", "gfx942", "gfx950"}));
}

TEST(OffloadBundle, MalformedCompressedBundles) {
  const Bytes plain = small_bundle();
  const Bytes v3 = zlib_ccob(3, plain);
  expect_refused(as_bytes("CCOB\x02"), "is cut off: the version");
  expect_refused(Bytes(v3.begin(), v3.begin() + 26), "is cut off: the version 3 header");
  // 100 GiB declared: refused before anything is inflated or allocated.
  expect_refused(patched<std::uint64_t>(v3, 16, std::uint64_t{100} << 30), "declares 107374182400 bytes uncompressed");
  expect_refused(patched<std::uint64_t>(v3, 8, std::uint64_t{1} << 20), "is cut off: the total size its header declares");
  expect_refused(patched<std::uint64_t>(v3, 8, 5), "less than its own header");
  expect_refused(patched<std::uint16_t>(v3, 4, 4), "format version 4");
  expect_refused(patched<std::uint16_t>(v3, 6, 7), "compression method 7");
  expect_refused(ccob(2, 0, as_bytes("this is no zlib stream"), plain), "corrupt zlib stream");
  const Bytes z = zlib_compress(plain);
  expect_refused(ccob(1, 0, Bytes(z.begin(), z.end() - 6), plain), "is cut off inside its zlib stream");
  expect_refused(ccob(3, 0, Bytes(z.begin(), z.end() - 6), plain), "is cut off inside its zlib stream");
  expect_refused(patched<std::uint64_t>(v3, 16, 10), "decompresses to more than the 10 bytes its header declares");
  expect_refused(patched<std::uint64_t>(v3, 16, plain.size() - 1),
                 "decompresses to " + std::to_string(plain.size()) + " bytes, but its header declares");
  expect_refused(patched<std::uint64_t>(v3, 16, plain.size() + 1),
                 "decompresses to " + std::to_string(plain.size()) + " bytes, but its header declares");
  expect_refused(zlib_ccob(2, as_bytes("hello")), "decompressed, does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  expect_refused(zlib_ccob(2, v3), "does not start with the __CLANG_OFFLOAD_BUNDLE__ magic");
  Bytes inner_bad = plain;
  poke<std::uint64_t>(inner_bad, kEntry1 + 8, 4096);
  expect_refused(zlib_ccob(3, inner_bad), "decompressed, is cut off: entry 1");
  for (std::size_t n = 1; n < v3.size(); ++n) expect_refused(Bytes(v3.begin(), v3.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

}  // namespace
}  // namespace kwheel
