// stage_build and commit_build, the two halves of build_wheels: what is
// staged is what is committed, and a wheel kept at staging is only recorded
// at the commit if it is still the one staging saw.
#include "kwheel/factory/staging.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "factory/build_fixtures.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::BuiltWithoutDigest;
using kwheel::testing::sha256sum;
using kwheel::testing::slurp;
using kwheel::testing::state_of;

// Another run into the same out_dir may replace a kept wheel between this
// run's staging (which hashed it) and its commit: that digest is not the
// new file's, so it is not recorded.
TEST(BuildWheels, AKeptWheelReplacedBeforeTheCommitGetsNoDigestRecorded) {
  BuiltWithoutDigest b;
  StagedBuild staged = stage_build(b.variants, b.o);
  ASSERT_TRUE(staged.report.ok());
  ASSERT_TRUE(staged.report.variants[0].reused);
  const std::string hashed = staged.report.variants[0].sha256;
  EXPECT_EQ(hashed, sha256sum(b.wheel));
  const fs::path other = b.wheel.parent_path() / "other.tmp";
  std::ofstream(other, std::ios::binary) << slurp(b.wheel) << "another run's bytes";
  fs::rename(other, b.wheel);
  commit_build(staged);
  EXPECT_FALSE(state_of(b.wheel).contains("sha256")) << state_of(b.wheel).dump();
  auto after = build_wheels(b.variants, b.o);
  EXPECT_FALSE(after.variants[0].reused);
  EXPECT_EQ(after.variants[0].sha256, hashed);
}
