// A repo checkout on disk comes from an untrusted source (a clone, a cache
// snapshot another tool wrote): list_local_repo lists build/ and refuses
// every link or special file that would reach outside it.
#include "kwheel/hub/repo_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "kwheel/base/error.hpp"
#include "kwheel/kernel/repo_layout.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::slurp;

namespace {

void write(const fs::path& p, const std::string& content = "x") {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
}

std::string error_of(const fs::path& dir) {
  try {
    list_local_repo(dir);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    return e.what();
  }
  return "";
}

std::vector<std::string> paths(const std::vector<RepoFile>& files) {
  std::vector<std::string> out;
  for (const auto& f : files) out.push_back(f.path);
  return out;
}

}  // namespace

TEST(LocalRepo, ListsFilesWithSizesAndExecBit) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(r / "build/torch-universal/img2gray/__init__.py", "abc");
  write(r / "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_x.abi3.so", "\x7f" "ELF");
  write(r / "build/torch27-cxx11-cu126-x86_64-linux/img2gray/run.sh", "#!/bin/sh\n");
  fs::permissions(r / "build/torch27-cxx11-cu126-x86_64-linux/img2gray/run.sh", fs::perms::owner_exec, fs::perm_options::add);
  write(r / "build/torch-universal/img2gray/__pycache__/x.cpython-311.pyc");
  write(r / "build/torch-universal/img2gray/stale.pyc");
  write(r / "README.md");
  auto files = list_local_repo(r);
  EXPECT_EQ(paths(files), (std::vector<std::string>{"build/torch-universal/img2gray/__init__.py",
                                                    "build/torch27-cxx11-cu126-x86_64-linux/img2gray/_x.abi3.so",
                                                    "build/torch27-cxx11-cu126-x86_64-linux/img2gray/run.sh"}));
  EXPECT_EQ(files[0].size, 3u);
  EXPECT_EQ(files[0].source, r / "build/torch-universal/img2gray/__init__.py");
  EXPECT_FALSE(files[0].executable);
  EXPECT_FALSE(files[1].executable);  // .so mode is the writer's business
  EXPECT_TRUE(files[2].executable);
}

TEST(LocalRepo, EmptyVariantIsListed) {
  TempDir t;
  fs::create_directories(t.path() / "build/torch-cpu");
  write(t.path() / "build/torch-cuda/img2gray/__init__.py");
  auto v = group_variants(list_local_repo(t.path()));
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].name, "torch-cpu");
  EXPECT_TRUE(v[0].files.empty());
}

TEST(LocalRepo, MissingDirectories) {
  TempDir t;
  try {
    list_local_repo(t.path() / "nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
  }
  try {
    list_local_repo(t.path());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("no build/ directory"), std::string::npos);
  }
}

TEST(LocalRepo, SymlinkInsideRepoIsFollowed) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(r / "build/torch-universal/img2gray/__init__.py", "shared");
  write(r / "common/_ops.py", "ops!");
  fs::create_directories(r / "build/torch-cpu/img2gray");
  // Relative targets with '..' are fine while they stay inside the repo.
  fs::create_symlink("../../torch-universal/img2gray/__init__.py", r / "build/torch-cpu/img2gray/__init__.py");
  fs::create_symlink("../../../common/_ops.py", r / "build/torch-cpu/img2gray/_ops.py");
  auto files = list_local_repo(r);
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].path, "build/torch-cpu/img2gray/__init__.py");
  EXPECT_EQ(files[0].size, 6u);
  EXPECT_EQ(files[1].path, "build/torch-cpu/img2gray/_ops.py");
  EXPECT_EQ(files[1].size, 4u);
}

TEST(LocalRepo, SymlinkOutsideRepoIsRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(t.path() / "secret.txt", "outside");
  write(r / "build/torch-cpu/img2gray/__init__.py");
  fs::create_symlink(t.path() / "secret.txt", r / "build/torch-cpu/img2gray/abs.py");
  std::string e = error_of(r);
  EXPECT_NE(e.find("build/torch-cpu/img2gray/abs.py"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the repo"), std::string::npos) << e;
}

TEST(LocalRepo, RelativeSymlinkEscapingWithDotDotIsRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(t.path() / "secret.txt", "outside");
  write(r / "build/torch-cpu/img2gray/__init__.py");
  fs::create_symlink("../../../../secret.txt", r / "build/torch-cpu/img2gray/rel.py");
  std::string e = error_of(r);
  EXPECT_NE(e.find("build/torch-cpu/img2gray/rel.py"), std::string::npos) << e;
  EXPECT_NE(e.find("../../../../secret.txt"), std::string::npos) << e;
}

TEST(LocalRepo, SymlinkToSiblingWithSharedPrefixIsOutside) {
  // "/tmp/x/repo-other" starts with the string "/tmp/x/repo" but is not inside it.
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(t.path() / "repo-other/x.py");
  write(r / "build/torch-cpu/img2gray/__init__.py");
  fs::create_symlink("../../../../repo-other/x.py", r / "build/torch-cpu/img2gray/x.py");
  EXPECT_NE(error_of(r).find("outside the repo"), std::string::npos);
}

TEST(LocalRepo, SymlinkedDirectoryOutsideIsRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(t.path() / "elsewhere/img2gray/__init__.py");
  fs::create_directories(r / "build");
  fs::create_directory_symlink(t.path() / "elsewhere", r / "build/torch-cpu");
  EXPECT_NE(error_of(r).find("build/torch-cpu"), std::string::npos);
}

TEST(LocalRepo, BuildDirItselfLinkingOutsideIsRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(t.path() / "elsewhere/torch-cpu/img2gray/__init__.py");
  fs::create_directories(r);
  fs::create_directory_symlink(t.path() / "elsewhere", r / "build");
  std::string e = error_of(r);
  EXPECT_NE(e.find("build"), std::string::npos) << e;
  EXPECT_NE(e.find("outside the repo"), std::string::npos) << e;
}

TEST(LocalRepo, SymlinkToDirectoryInsideIsRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(r / "build/torch-universal/img2gray/__init__.py");
  fs::create_directories(r / "build/torch-cpu");
  fs::create_directory_symlink("../torch-universal/img2gray", r / "build/torch-cpu/img2gray");
  EXPECT_NE(error_of(r).find("symlink to a directory"), std::string::npos);
}

TEST(LocalRepo, SpecialFilesRefused) {
  TempDir t;
  const fs::path r = t.path() / "repo";
  write(r / "build/torch-cpu/img2gray/__init__.py");
  ASSERT_EQ(::mkfifo((r / "build/torch-cpu/img2gray/fifo").c_str(), 0644), 0);
  std::string e = error_of(r);
  EXPECT_NE(e.find("build/torch-cpu/img2gray/fifo"), std::string::npos) << e;
  EXPECT_NE(e.find("not a regular file"), std::string::npos) << e;
}
