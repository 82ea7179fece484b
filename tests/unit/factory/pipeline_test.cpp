// run_pipeline, the call `kwheel build` makes: a directory source builds
// and commits; a run with any failed variant, or that stops with an error,
// leaves the output directory exactly as it was, created or not.
#include "kwheel/factory/pipeline.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "error_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::error_of;

namespace {

void touch(const fs::path& p, const std::string& content = "x = 1\n") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << content;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(fs::relative(e.path(), dir).string());
  return names;
}

struct Fixture {
  TempDir t;
  fs::path repo = t.path() / "img2gray";
  fs::path out = t.path() / "dist";
  Fixture() { touch(repo / "build/torch-universal/img2gray/__init__.py"); }
  PipelineRequest request() const {
    PipelineRequest r;
    r.source.source = repo.string();
    r.version.version = "1.0";
    r.options.out_dir = out;
    return r;
  }
  void break_a_variant() const { touch(repo / "build/not-a-variant/img2gray/__init__.py"); }
};

TEST(Pipeline, ADirectoryBuildCommitsItsWheels) {
  Fixture f;
  const PipelineResult r = run_pipeline(f.request(), {});
  EXPECT_TRUE(r.committed);
  EXPECT_EQ(r.exit_code(), 0);
  ASSERT_EQ(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0]->source.name, "img2gray");
  EXPECT_EQ(r.wheels_built(), 1u);
  const auto& v = r.kernels[0]->staged.report.variants.at(0);
  EXPECT_TRUE(fs::is_regular_file(v.wheel)) << v.wheel;
  EXPECT_EQ(v.wheel.parent_path(), f.out);
  EXPECT_TRUE(v.wheel.filename().string().starts_with("img2gray-1.0")) << v.wheel;
}

TEST(Pipeline, AFailedVariantRemovesTheOutputDirectoryItCreated) {
  Fixture f;
  f.break_a_variant();
  const PipelineResult r = run_pipeline(f.request(), {});
  EXPECT_FALSE(r.committed);
  EXPECT_EQ(r.exit_code(), static_cast<int>(ErrorKind::input));
  EXPECT_EQ(r.wheels_built(), 1u);  // built, staged, then discarded with the run
  EXPECT_FALSE(fs::exists(f.out));
}

TEST(Pipeline, AFailedVariantLeavesAnExistingOutputDirectoryAsItWas) {
  Fixture f;
  f.break_a_variant();
  touch(f.out / "keep.txt", "mine");
  const PipelineResult r = run_pipeline(f.request(), {});
  EXPECT_FALSE(r.committed);
  EXPECT_EQ(listing(f.out), (std::set<std::string>{"keep.txt"}));
}

TEST(Pipeline, AnErrorBeforeBuildingLeavesNoOutputDirectory) {
  Fixture f;
  PipelineRequest r = f.request();
  r.version.version.clear();  // a directory build needs a version
  EXPECT_NE(error_of([&] { run_pipeline(r, {}); }, ErrorKind::usage).find("needs --version"), std::string::npos);
  EXPECT_FALSE(fs::exists(f.out));
}

TEST(Pipeline, ASourceAndALockAreExclusive) {
  Fixture f;
  PipelineRequest r = f.request();
  r.lock = (f.t.path() / "kernels.lock").string();
  EXPECT_NE(error_of([&] { run_pipeline(r, {}); }, ErrorKind::usage).find("give one of"), std::string::npos);
  r.source.source.clear();  // a lock pins each kernel's version itself
  EXPECT_NE(error_of([&] { run_pipeline(r, {}); }, ErrorKind::usage).find("drop --version"), std::string::npos);
  EXPECT_FALSE(fs::exists(f.out));
}

}  // namespace
