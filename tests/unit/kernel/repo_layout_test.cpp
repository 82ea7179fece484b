// Repo paths come from untrusted listings: the wheel-path rule and
// grouping into variants.
#include "kwheel/kernel/repo_layout.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

namespace {

std::vector<std::string> paths(const std::vector<RepoFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

RepoFile rf(std::string path) { return RepoFile{std::move(path), "/dev/null", 0, false}; }

}  // namespace

TEST(ReservedWheelPath, TopLevelDistInfoAndDataAreTheInstallersOwn) {
  // pip takes any top-level *.dist-info for the metadata directory (two
  // are an error) and any *.data for the data directory (unknown schemes
  // are an error): a package named so builds a wheel pip refuses.
  for (const std::string bad : {"x-1.0.dist-info/__init__.py", "x-1.0.data/__init__.py", "x.dist-info", "pkg.data/sub/file.py"})
    EXPECT_NE(reserved_wheel_path_reason(bad), "") << bad;
  EXPECT_NE(reserved_wheel_path_reason("x-1.0.data/a").find("data directory"), std::string::npos);
  EXPECT_NE(reserved_wheel_path_reason("x-1.0.dist-info/a").find("metadata directory"), std::string::npos);
  // Only the top level: deeper names, and names merely containing the words, are ordinary.
  for (const std::string ok : {"img2gray/__init__.py", "img2gray/x.data", "img2gray/y.dist-info/z", "data/x", "dist-info", "x.database/y"})
    EXPECT_EQ(reserved_wheel_path_reason(ok), "") << ok;
}

TEST(GroupVariants, GroupsSortsAndIgnoresOutsideBuild) {
  auto v = group_variants({rf("build/torch-universal/img2gray/b.py"), rf("README.md"), rf("build/torch-universal/img2gray/a.py"),
                           rf("build/torch27-cxx11-cu126-x86_64-linux/img2gray/__init__.py"), rf("builder/x/y"),
                           rf("torch-ext/img2gray/x.py")});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "torch-universal");
  EXPECT_EQ(paths(v[0].files), (std::vector<std::string>{"img2gray/a.py", "img2gray/b.py"}));
  EXPECT_EQ(v[1].name, "torch27-cxx11-cu126-x86_64-linux");
  EXPECT_EQ(paths(v[1].files), (std::vector<std::string>{"img2gray/__init__.py"}));
}

TEST(GroupVariants, EmptyVariantMarker) {
  auto v = group_variants({rf("build/torch-cpu/"), rf("build/torch-cuda/img2gray/__init__.py")});
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "torch-cpu");
  EXPECT_TRUE(v[0].files.empty());
  EXPECT_EQ(v[1].files.size(), 1u);
}

TEST(GroupVariants, Errors) {
  auto err = [](std::vector<RepoFile> files) -> std::string {
    try {
      group_variants(files);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      return e.what();
    }
    return "";
  };
  EXPECT_NE(err({rf("build/loose.py")}).find("directly in build/"), std::string::npos);
  EXPECT_NE(err({rf("build/v/../../etc/passwd")}).find("'..' path component"), std::string::npos);
  EXPECT_NE(err({rf("build/v/a\\b")}).find("build/v/a\\b"), std::string::npos);
  EXPECT_NE(err({rf("build//x")}).find("empty path component"), std::string::npos);
}
