#include "kwheel/base/temp_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

TEST(TempDir, PrivateAndRemovedWithItsContents) {
  fs::path where;
  {
    TempDir t("unit");
    where = t.path();
    EXPECT_TRUE(fs::is_directory(where));
    EXPECT_TRUE(where.filename().string().starts_with("kwheel-unit-"));
    struct stat st {};
    ASSERT_EQ(::stat(where.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::create_directories(where / "a/b");
    std::ofstream(where / "a/b/f") << "x";
  }
  EXPECT_FALSE(fs::exists(where));
}

TEST(TempDir, KeepLeavesItOnDisk) {
  fs::path where;
  {
    TempDir t("unit");
    t.keep();
    where = t.path();  // renamed by keep(): no sweep may take it for stale
  }
  EXPECT_TRUE(fs::is_directory(where));
  fs::remove_all(where);
}

TEST(TempDir, UnwritableTmpdirIsAnIoErrorNamingIt) {
  kwheel::testing::ScopedEnv tmpdir("TMPDIR", "/proc");
  try {
    TempDir t("unit");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("/proc"), std::string::npos) << e.what();
  }
}
