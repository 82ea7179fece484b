// apply_version_rule (docs/wheel-naming.md): which version a build's wheels
// carry, decided before anything is downloaded.
#include "kwheel/factory/wheel_version.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"

using namespace kwheel;
using kwheel::testing::error_of;

namespace {

ResolvedSource directory() {
  ResolvedSource s;
  s.location = "./my-kernel";
  s.name = "my-kernel";
  return s;
}

ResolvedSource hub(Resolution r, std::vector<TreeEntry> tree = {}) {
  ResolvedSource s;
  s.is_hub = true;
  s.location = "kernels-community/img2gray";
  s.resolution = std::move(r);
  s.tree = std::move(tree);
  return s;
}

TEST(WheelVersion, ADirectoryNeedsAVersion) {
  BuildOptions o;
  EXPECT_EQ(error_of([&] { apply_version_rule(o, {}, directory(), std::nullopt); }, ErrorKind::usage),
            "building from directory './my-kernel' needs --version, e.g. --version 1.0");
  apply_version_rule(o, {"1.2", ""}, directory(), std::nullopt);
  EXPECT_EQ(o.version, "1.2");
  EXPECT_FALSE(o.build_number);
}

TEST(WheelVersion, WheelVersionOverridesEveryRule) {
  BuildOptions o;
  apply_version_rule(o, {"", "3.0.1"}, directory(), std::nullopt);
  EXPECT_EQ(o.version, "3.0.1");
  BuildOptions h;
  apply_version_rule(h, {"", "3.0.1"}, hub({"v1", "v1", "abc", std::nullopt, 1, false}), std::nullopt);
  EXPECT_EQ(h.version, "3.0.1");
  EXPECT_FALSE(h.branch_version);
}

TEST(WheelVersion, AnOldRepoTagGivesTheVersion) {
  BuildOptions o;
  apply_version_rule(o, {}, hub({">=0.1", "v0.1.1", "abc", "0.1.1", std::nullopt, false}), std::nullopt);
  EXPECT_EQ(o.version, "0.1.1");
  EXPECT_FALSE(o.build_number);
}

TEST(WheelVersion, NoBranchNoTagNoMetadataIsRefusedBeforeDownloading) {
  BuildOptions o;
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const auto src = hub({"main", "main", commit, std::nullopt, std::nullopt, false}, {{"build/torch-universal/img2gray/__init__.py", "file"}});
  const std::string e = error_of([&] { apply_version_rule(o, {}, src, std::nullopt); }, ErrorKind::usage);
  EXPECT_NE(e.find("revision 'main' of kernels-community/img2gray (commit 0123456789ab) is not a vN branch"), std::string::npos) << e;
}

}  // namespace
