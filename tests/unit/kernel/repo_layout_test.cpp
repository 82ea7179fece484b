// Repo paths come from untrusted listings (and symlinks from untrusted
// checkouts): every rule in repo_layout.hpp, and grouping into variants.
#include "kwheel/kernel/repo_layout.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "kwheel/base/error.hpp"
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

RepoFile rf(std::string path) { return RepoFile{std::move(path), "/dev/null", 0, false}; }

}  // namespace

TEST(UnsafePath, AcceptsOrdinaryPaths) {
  for (auto ok : {"a", "build/torch-universal/img2gray/__init__.py", "a/b c/d", "img2gray/\xc3\xa9t\xc3\xa9.py",
                  "a,b\"c", "..a/b..", ".hidden/x"})
    EXPECT_EQ(unsafe_path_reason(ok), "") << ok;
}

TEST(UnsafePath, RejectsWithReason) {
  struct Case {
    std::string path;
    const char* why;
  } cases[] = {
      {"", "empty path"},
      {"/etc/passwd", "absolute path"},
      {"../x", "'..' path component"},
      {"build/../../x", "'..' path component"},
      {"build/v/..", "'..' path component"},
      {"./x", "'.' path component"},
      {"a//b", "empty path component"},
      {"a/", "empty path component"},
      {"a\\..\\b", "backslash"},
      {"C:\\x", "backslash"},
      {std::string("a\0b", 3), "NUL"},
      {"a\nb", "control character"},
      {"a\rb", "control character"},
      {"a\tb", "control character"},
      {"a\x7f", "control character"},
      {std::string(256, 'n'), "component longer than 255"},
      {std::string(1025, 'n'), "longer than 1024"},
  };
  for (const auto& c : cases) {
    std::string why = unsafe_path_reason(c.path);
    EXPECT_NE(why.find(c.why), std::string::npos) << "'" << c.path << "' -> '" << why << "'";
  }
  // Limits are inclusive.
  EXPECT_EQ(unsafe_path_reason(std::string(255, 'n')), "");
  std::string long_ok;
  while (long_ok.size() + 101 <= 1024) long_ok += std::string(100, 'n') + "/";
  long_ok += "x";
  EXPECT_LE(long_ok.size(), 1024u);
  EXPECT_EQ(unsafe_path_reason(long_ok), "");
}

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
