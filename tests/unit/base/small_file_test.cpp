// read_small_file: the one bounded whole-file read.
#include "kwheel/base/small_file.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
using kwheel::testing::error_of;

namespace {

std::filesystem::path small_file_of(const std::filesystem::path& p, size_t n) {
  std::ofstream(p, std::ios::binary) << std::string(n, 'x');
  return p;
}

}  // namespace

TEST(SmallFile, ReadsAFileUpToItsLimit) {
  TempDir d("small-file");
  EXPECT_EQ(read_small_file(small_file_of(d.path() / "a", 1024), 1024, "the file"), std::string(1024, 'x'));
}

TEST(SmallFile, AFileOverTheLimitIsRefusedBeforeItIsRead) {
  TempDir d("small-file");
  const std::string e = error_of([&] { read_small_file(small_file_of(d.path() / "a", (1 << 20) + 1), 1 << 20, "metadata.json", "rebuild it"); });
  EXPECT_NE(e.find("1048577 bytes, over the 1 MiB limit; rebuild it"), std::string::npos) << e;
}

TEST(SmallFile, WhatIsNotARegularFileIsNotFound) {
  TempDir d("small-file");
  EXPECT_NE(error_of([&] { read_small_file(d.path(), 10, "the bundle"); }, ErrorKind::not_found).find("is not a file"), std::string::npos);
  EXPECT_NE(error_of([&] { read_small_file(d.path() / "missing", 10, "the bundle"); }, ErrorKind::not_found).find("the bundle"), std::string::npos);
  // /dev/zero would never end; it is no regular file, so nothing is read.
  EXPECT_NE(error_of([&] { read_small_file("/dev/zero", 10, "the root"); }, ErrorKind::not_found).find("/dev/zero"), std::string::npos);
}
