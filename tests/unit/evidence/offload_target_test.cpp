// Bundle entry ids: every layout the bundler writes or wrote, read into
// kind, triple, target id and processor, and the ids the grammar refuses.
#include "kwheel/evidence/offload_target.hpp"

#include "offload_bundle_fixture.hpp"

namespace kwheel {
namespace {

using namespace kwheel::testing;

// Old clang's ids (three-field triple, no "--"), a bare host triple, OpenMP,
// a generic processor (its name holds '-'), and the bitcode file type.
TEST(OffloadBundle, LegacyIdsOtherKindsAndBitcode) {
  REQUIRE_TOOL(find_bundler(), "clang-offload-bundler");
  TempDir d;
  const std::vector<Entry> entries = {{"host-x86_64-unknown-linux", "host bitcode stand-in"},
                                      {"hip-amdgcn-amd-amdhsa-gfx906", code_object(d, "gfx906")},
                                      {"openmp-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-", "openmp stand-in"},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", "generic stand-in"}};
  const auto bundles = parse_offload_bundles(bundle_with_tool(d, "fat.bc", entries, "bc"), "fat.bc");
  ASSERT_EQ(bundles.size(), 1u);
  ASSERT_EQ(bundles[0].targets.size(), 4u);
  expect_target(bundles[0], entries[0], "host", "x86_64-unknown-linux", "", "");
  expect_target(bundles[0], entries[1], "hip", "amdgcn-amd-amdhsa", "gfx906", "gfx906");
  expect_target(bundles[0], entries[2], "openmp", "amdgcn-amd-amdhsa", "gfx90a:sramecc+:xnack-", "gfx90a");
  expect_target(bundles[0], entries[3], "hipv4", "amdgcn-amd-amdhsa", "gfx10-3-generic", "gfx10-3-generic");
  EXPECT_EQ(gfx_targets(bundles), (Strings{"gfx10-3-generic", "gfx906", "gfx90a"}));
}

TEST(OffloadBundle, MalformedEntryIds) {
  const auto with_id = [](const std::string& id) { return write_bundle({kHost, {id, "CODE"}}, 8); };
  expect_refused(with_id("gfx90a"), "is not <kind>-<arch>-<vendor>-<os>");
  expect_refused(with_id("hipv4-amdgcn"), "is not <kind>-<arch>-<vendor>-<os>");
  expect_refused(with_id("-amdgcn-amd-amdhsa--gfx90a"), "empty offload kind");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack"), "target id");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--:xnack+"), "target id");
  expect_refused(with_id("hipv4-amdgcn-amd-amdhsa--gfx90a::xnack+"), "target id");
  expect_refused(with_id("hipv4-amd gcn-amd-amdhsa--gfx90a"), "characters");
  expect_refused(with_id(std::string("hipv4-amdgcn-amd-amdhsa--gfx90a\0", 32)), "characters");
  expect_refused(with_id("hipv4-amd:gcn-amd-amdhsa--gfx90a"), "malformed target triple");
}

}  // namespace
}  // namespace kwheel
