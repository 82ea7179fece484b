// TempPath and write_file_atomic on real files: an output appears whole
// under its final name or not at all, and nothing of ours is left beside it.
#include "kwheel/base/atomic_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::slurp;

void put(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
}

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

TEST(TempPath, TempNameIsHiddenAndBesideTheFinalPath) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "out.whl";
  TempPath a(final_path);
  TempPath b(final_path);
  EXPECT_EQ(a.final_path(), final_path);
  // Same directory: rename(2) is atomic only within one filesystem.
  EXPECT_EQ(a.path().parent_path(), final_path.parent_path());
  const std::string leaf = a.path().filename().string();
  EXPECT_TRUE(leaf.starts_with(".")) << leaf;                       // hidden from ls and globs
  EXPECT_NE(leaf.find("out.whl"), std::string::npos) << leaf;      // says what it will become
  EXPECT_NE(a.path(), final_path);
  EXPECT_NE(a.path(), b.path()) << "two writers of one file must not share a temp";
  EXPECT_FALSE(fs::exists(a.path())) << "the caller creates the temp";
}

TEST(TempPath, CommitRenamesOverTheFinalPath) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "RECORD";
  fs::path temp;
  {
    TempPath t(final_path);
    temp = t.path();
    put(t.path(), "new contents");
    EXPECT_FALSE(fs::exists(final_path)) << "nothing appears before commit";
    t.commit();
    EXPECT_FALSE(fs::exists(temp));
    EXPECT_EQ(slurp(final_path), "new contents");
  }
  // Destroying a committed TempPath keeps the result.
  EXPECT_EQ(slurp(final_path), "new contents");
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"RECORD"}) << "no temp and no lock file left behind";
}

TEST(TempPath, CommitReplacesAnExistingFileWhole) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "f.txt";
  put(final_path, "old");
  {
    TempPath t(final_path);
    put(t.path(), "replacement");
    EXPECT_EQ(slurp(final_path), "old") << "the old file stays readable until commit";
    t.commit();
  }
  EXPECT_EQ(slurp(final_path), "replacement");
}

TEST(TempPath, DestroyedWithoutCommitRemovesTheTemp) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "f.txt";
  put(final_path, "old");
  fs::path temp;
  {
    TempPath t(final_path);
    temp = t.path();
    put(t.path(), "half-written");
    ASSERT_TRUE(fs::exists(temp));
  }
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_EQ(slurp(final_path), "old") << "an abandoned write leaves the old file as it was";
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"f.txt"});
}

TEST(TempPath, DestroyedByAnExceptionRemovesTheTemp) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "f.txt";
  fs::path temp;
  try {
    TempPath t(final_path);
    temp = t.path();
    put(t.path(), "partial");
    throw std::runtime_error("write failed half way");
  } catch (const std::runtime_error&) {
  }
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_FALSE(fs::exists(final_path));
}

TEST(TempPath, CommitOfANeverWrittenTempIsAnIoError) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "f.txt";
  put(final_path, "old");
  TempPath t(final_path);
  const std::string msg = error_of([&] { t.commit(); }, ErrorKind::io);
  EXPECT_NE(msg.find("f.txt"), std::string::npos) << msg;
  EXPECT_EQ(slurp(final_path), "old");
}

TEST(TempPath, CommitOverANonEmptyDirectoryIsAnIoErrorAndCleansUp) {
  TempDir dir("unit");
  const fs::path final_path = dir.path() / "taken";
  fs::create_directories(final_path / "inside");
  fs::path temp;
  {
    TempPath t(final_path);
    temp = t.path();
    put(t.path(), "x");
    error_of([&] { t.commit(); }, ErrorKind::io);
  }
  EXPECT_FALSE(fs::exists(temp)) << "a failed commit is not a commit: the temp goes";
  EXPECT_TRUE(fs::is_directory(final_path / "inside"));
}

TEST(TempPath, MissingDirectoryIsAnIoError) {
  TempDir dir("unit");
  error_of([&] { TempPath t(dir.path() / "no-such-dir" / "f.txt"); }, ErrorKind::io);
  EXPECT_FALSE(fs::exists(dir.path() / "no-such-dir"));
}

TEST(WriteFileAtomic, WritesExactBytes) {
  TempDir dir("unit");
  const fs::path p = dir.path() / "blob";
  const std::string bytes("a\0b\r\n\xff", 6);
  write_file_atomic(p, bytes);
  EXPECT_EQ(slurp(p), bytes);
  write_file_atomic(p, "");
  EXPECT_TRUE(fs::is_regular_file(p));
  EXPECT_EQ(fs::file_size(p), 0u);
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"blob"});
}

TEST(WriteFileAtomic, FailureLeavesTheOldFile) {
  TempDir dir("unit");
  const fs::path taken = dir.path() / "taken";
  fs::create_directories(taken / "inside");
  error_of([&] { write_file_atomic(taken, "x"); }, ErrorKind::io);
  EXPECT_TRUE(fs::is_directory(taken / "inside"));
  EXPECT_EQ(names_in(dir.path()), std::set<std::string>{"taken"}) << "no temp left after the failure";
  error_of([&] { write_file_atomic(dir.path() / "missing" / "f", "x"); }, ErrorKind::io);
}

}  // namespace
}  // namespace kwheel
