// The one rule for which top-level directory is a tree's import package,
// shared by the build (a nested variant) and validate (a built wheel).
#include "kwheel/kernel/package_dir.hpp"

#include <gtest/gtest.h>

using namespace kwheel;

namespace {

TopLevelDirs tops_of(std::initializer_list<std::string_view> paths) {
  TopLevelDirs t;
  for (auto p : paths) t.add(p);
  return t;
}

using Set = std::set<std::string>;

}  // namespace

TEST(PackageDir, ReadsTopLevelDirectoriesAndTheirInitFiles) {
  auto t = tops_of({"setup.py", "relu/__init__.py", "relu/ops/__init__.py", "data/x.bin", "/abs", "tools/sub/__init__.py"});
  EXPECT_EQ(t.dirs, (Set{"data", "relu", "tools"}));
  EXPECT_EQ(t.packages, Set{"relu"});  // only an __init__.py directly inside counts
}

TEST(PackageDir, TheDirectoryNamedAfterTheProjectWins) {
  auto t = tops_of({"my_kernel/__init__.py", "helpers/__init__.py"});
  EXPECT_EQ(pick_package_dir(t, "my-kernel", NamedDirectory::package), "my_kernel");
  EXPECT_EQ(pick_package_dir(t, "My.Kernel", NamedDirectory::any), "my_kernel");
}

TEST(PackageDir, ElseTheOnlyPackage) {
  auto t = tops_of({"relu/__init__.py", "relu/_ops.py", "data/x.bin"});
  EXPECT_EQ(pick_package_dir(t, "other", NamedDirectory::package), "relu");
  EXPECT_EQ(pick_package_dir(t, "other", NamedDirectory::any), "relu");
}

TEST(PackageDir, NothingDecidesAmongSeveralOrNone) {
  EXPECT_EQ(pick_package_dir(tops_of({"a/__init__.py", "b/__init__.py"}), "c", NamedDirectory::any), std::nullopt);
  EXPECT_EQ(pick_package_dir(tops_of({"a/x.py", "__init__.py"}), "c", NamedDirectory::any), std::nullopt);
}

TEST(PackageDir, ANamedDirectoryWithoutInitCountsOnlyWhenAnyMay) {
  // A nested variant's directory named after the kernel is its package
  // whatever it holds; in a built wheel only an importable one is.
  auto t = tops_of({"relu/_ops.py", "other/__init__.py"});
  EXPECT_EQ(pick_package_dir(t, "relu", NamedDirectory::any), "relu");
  EXPECT_EQ(pick_package_dir(t, "relu", NamedDirectory::package), "other");
}
