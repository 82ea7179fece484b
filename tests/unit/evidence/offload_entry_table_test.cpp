// The uncompressed bundle: laid out byte for byte as the bundler lays it
// out, read, and broken in each way the entry-table reader must refuse
// (each an Error(input) naming the file), its ids' copies capped.
#include "kwheel/evidence/offload_entry_table.hpp"

#include "offload_bundle_fixture.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

TEST(OffloadBundle, ByteForByteLikeTheBundler) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const auto entries = hip_entries(d);
  EXPECT_EQ(write_bundle(entries), bundle_with_tool(d, "fat.hipfb", entries));
}

TEST(OffloadBundle, SmallBundleIsWellFormed) {
  const auto bundles = parse_offload_bundles(small_bundle(), "ok.so");
  ASSERT_EQ(bundles.size(), 1u);
  ASSERT_EQ(bundles[0].targets.size(), 2u);
  EXPECT_EQ(bundles[0].targets[1].processor, "gfx90a");
  EXPECT_EQ(bundles[0].targets[1].size, 4u);
}

TEST(OffloadBundle, MalformedUncompressedBundles) {
  const Bytes b = small_bundle();
  expect_refused(Bytes(b.begin(), b.begin() + 10), "ends inside an offload bundle's magic");
  expect_refused(Bytes(b.begin(), b.begin() + 24), "is cut off: the entry count");
  expect_refused(patched<std::uint64_t>(b, 24, std::uint64_t{1} << 62), "declares 4611686018427387904 entries");
  expect_refused(patched<std::uint64_t>(b, 24, 3), "is cut off");
  expect_refused(patched<std::uint64_t>(b, kEntry1, std::uint64_t{1} << 40), "entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a')'s code object");
  expect_refused(patched<std::uint64_t>(b, kEntry1 + 8, b.size()), "entry 1 ('hipv4-amdgcn-amd-amdhsa--gfx90a')'s code object");
  expect_refused(patched<std::uint64_t>(patched<std::uint64_t>(b, kEntry1, ~std::uint64_t{0} - 1), kEntry1 + 8, 4), "runs past");
  expect_refused(patched<std::uint64_t>(b, kEntry1, 0), "inside its entry table");
  expect_refused(patched<std::uint64_t>(b, kEntry0 + 16, std::uint64_t{1} << 63), "id is 9223372036854775808 bytes long");
  expect_refused(patched<std::uint64_t>(b, kEntry1 + 16, 1000), "is cut off: entry 1's id");
  Bytes junk = b;
  append(junk, as_bytes("\x01junk"));
  expect_refused(junk, "is neither zero padding nor an offload bundle");
  // Every truncation of a well-formed bundle is refused, never misread.
  for (std::size_t n = 1; n < b.size(); ++n) expect_refused(Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n)), "bad.so");
}

// The entries read out of a section are capped at 1 MiB plus 4 times the
// section (every thread may hold that much): a compressed bundle listing
// 20,000 entries from a few kilobytes is refused.
TEST(OffloadBundle, EntriesReadOutAreCappedRelativeToTheSection) {
  std::vector<Entry> entries{kHost};
  for (int i = 0; i < 20000; ++i) entries.push_back({"hipv4-amdgcn-amd-amdhsa--gfx90a", ""});
  const Bytes plain = write_bundle(entries, 8);
  const Bytes small = zstd_ccob(3, plain);
  ASSERT_LT(small.size(), 64u * 1024);
  expect_refused(small, "lists more entries than any real bundle");
  EXPECT_EQ(parse_offload_bundles(plain, "ok.so").at(0).targets.size(), 20001u);  // uncompressed: 4x its bytes
}

}  // namespace
}  // namespace kwheel
