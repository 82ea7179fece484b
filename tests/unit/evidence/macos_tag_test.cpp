// The darwin tag rule on Mach-O facts given directly (the reader has its
// own tests on binaries ld64.lld builds): the floor, the rounding to a tag
// installers match, --macos claims, and the refusals.
#include "kwheel/evidence/macos_tag.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"

namespace kwheel {
namespace {

MacosVersion v(unsigned major, unsigned minor, unsigned patch = 0) { return {major, minor, patch}; }

MachOInfo object(const std::string& name, const std::string& arch, std::optional<MacosVersion> min, std::optional<uint32_t> platform = 1) {
  MachOInfo o;
  o.name = name;
  MachOSlice s;
  s.arch = arch;
  s.min_macos = min;
  s.min_macos_source = min ? "LC_BUILD_VERSION" : "";
  s.platform = platform;
  o.slices.push_back(s);
  return o;
}

TEST(MacosTag, TagsRoundUpToWhatInstallersMatch) {
  EXPECT_EQ(taggable_macos(v(14, 0)), v(14, 0));
  EXPECT_EQ(taggable_macos(v(14, 2)), v(15, 0));
  EXPECT_EQ(taggable_macos(v(11, 0, 1)), v(12, 0));
  EXPECT_EQ(taggable_macos(v(10, 9)), v(10, 9));
  EXPECT_EQ(taggable_macos(v(10, 15, 4)), v(10, 16));
}

TEST(MacosTag, TheNewestMinimumWinsAboveTheBackendFloor) {
  auto r = assess_macos({object("a.so", "arm64", v(12, 0)), object("b.so", "arm64", v(13, 1))}, "arm64", v(11, 0), std::nullopt);
  EXPECT_EQ(r.platform_tag, "macosx_14_0_arm64");
  EXPECT_EQ(r.reason, "b.so needs macOS 13.1 (LC_BUILD_VERSION)");
  r = assess_macos({object("a.so", "arm64", v(14, 0))}, "arm64", macos_backend_floor("arm64", true), std::nullopt);
  EXPECT_EQ(r.platform_tag, "macosx_26_0_arm64");
  r = assess_macos({object("a.so", "x86_64", std::nullopt)}, "x86_64", macos_backend_floor("x86_64", false), std::nullopt);
  EXPECT_EQ(r.platform_tag, "macosx_10_9_x86_64");
  EXPECT_EQ(r.reason, "the backend's floor");
}

TEST(MacosTag, ClaimsAreCheckedAgainstObjectsAndFloor) {
  const std::vector<MachOInfo> objs{object("a.so", "arm64", v(12, 0))};
  EXPECT_EQ(assess_macos(objs, "arm64", v(11, 0), v(13, 0)).platform_tag, "macosx_13_0_arm64");
  auto msg = testing::error_of([&] { assess_macos(objs, "arm64", v(11, 0), v(11, 0)); }, ErrorKind::policy);
  EXPECT_EQ(msg, "--macos 11.0 claims too old a macOS: a.so needs macOS 12.0 (LC_BUILD_VERSION); pass --macos 12.0 or rebuild with MACOSX_DEPLOYMENT_TARGET=11.0");
  msg = testing::error_of([&] { assess_macos(objs, "arm64", v(26, 0), v(13, 0)); }, ErrorKind::usage);
  EXPECT_EQ(msg, "--macos 13.0 is below the 26.0 this backend needs; pass --macos 26.0 or higher");
  msg = testing::error_of([&] { assess_macos(objs, "arm64", v(11, 0), v(14, 2)); }, ErrorKind::usage);
  EXPECT_NE(msg.find("pass --macos 14.0 or 15.0"), std::string::npos) << msg;
  msg = testing::error_of([&] { assess_macos(objs, "arm64", v(10, 9), v(10, 15, 4)); }, ErrorKind::usage);
  EXPECT_NE(msg.find("by major and minor version only; pass --macos 10.15 or 10.16"), std::string::npos) << msg;
}

TEST(MacosTag, WrongCpuAndOtherApplePlatformsAreRefused) {
  auto msg = testing::error_of([] { assess_macos({object("a.so", "x86_64", v(11, 0))}, "arm64", v(11, 0), std::nullopt); }, ErrorKind::policy);
  EXPECT_EQ(msg, "'a.so' is a Mach-O for x86_64, not arm64; rebuild it for arm64 or build the variant that matches it");
  msg = testing::error_of([] { assess_macos({object("a.so", "arm64", std::nullopt, 6)}, "arm64", v(11, 0), std::nullopt); }, ErrorKind::policy);
  EXPECT_EQ(msg, "'a.so' is built for Apple platform 6 (LC_BUILD_VERSION), not macOS; rebuild it for macOS");
}

TEST(MacosTag, ParsesWheelTagsAndTheirCpus) {
  auto t = parse_macos_tag("macosx_10_9_x86_64");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->first, v(10, 9));
  EXPECT_EQ(t->second, "x86_64");
  EXPECT_EQ(macos_tag_archs("universal2"), (std::vector<std::string>{"arm64", "x86_64"}));
  EXPECT_TRUE(macos_tag_archs("ppc").empty());
  EXPECT_FALSE(parse_macos_tag("manylinux_2_28_x86_64"));
  EXPECT_FALSE(parse_macos_tag("macosx_x_0_arm64"));
}

}  // namespace
}  // namespace kwheel
