// MappedFile: a real file's bytes, exactly; an empty file is no bytes; a
// missing file or one that is not a regular file is an Error naming it.
#include "kwheel/base/mapped_file.hpp"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <type_traits>
#include <utility>

#include "error_support.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;

namespace {

std::filesystem::path write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
  return p;
}

std::string as_string(std::span<const std::byte> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

}  // namespace

TEST(MappedFile, MapsTheFilesBytes) {
  TempDir dir("mapped-file-test");
  std::string bytes = "\x7f" "ELF";
  bytes += std::string(1, '\0');
  for (int i = 0; i < 100000; ++i) bytes += static_cast<char>(i * 7);  // past one page
  const MappedFile m(write(dir.path() / "lib.so", bytes));
  ASSERT_EQ(m.bytes().size(), bytes.size());
  EXPECT_EQ(as_string(m.bytes()), bytes);
}

TEST(MappedFile, AMoveHandsTheMappingOver) {
  static_assert(!std::is_copy_constructible_v<MappedFile>, "a copy would unmap twice");
  TempDir dir("mapped-file-test");
  MappedFile first(write(dir.path() / "lib.so", "0123456789"));
  const std::byte* addr = first.bytes().data();
  MappedFile second(std::move(first));
  EXPECT_TRUE(first.bytes().empty());  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  ASSERT_EQ(second.bytes().data(), addr);
  EXPECT_EQ(as_string(second.bytes()), "0123456789");
  MappedFile third(write(dir.path() / "other.so", "abc"));
  third = std::move(second);
  EXPECT_EQ(as_string(third.bytes()), "0123456789");
}

TEST(MappedFile, EmptyFileIsNoBytes) {
  TempDir dir("mapped-file-test");
  const MappedFile m(write(dir.path() / "empty.so", ""));
  EXPECT_TRUE(m.bytes().empty());
}

TEST(MappedFile, MissingFileIsAnIoErrorNamingIt) {
  TempDir dir("mapped-file-test");
  const auto missing = dir.path() / "no-such.so";
  const std::string msg = kwheel::testing::error_of([&] { MappedFile m(missing); }, ErrorKind::io);
  EXPECT_NE(msg.find(missing.string()), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::strerror(ENOENT)), std::string::npos) << msg;
}

TEST(MappedFile, NotARegularFileIsAnInputError) {
  TempDir dir("mapped-file-test");
  const std::string msg = kwheel::testing::error_of([&] { MappedFile m(dir.path()); }, ErrorKind::input);
  EXPECT_NE(msg.find(dir.path().string()), std::string::npos) << msg;
  // A FIFO named like a library must not hang the open.
  const auto fifo = dir.path() / "libfifo.so";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string fifo_msg = kwheel::testing::error_of([&] { MappedFile m(fifo); }, ErrorKind::input);
  EXPECT_NE(fifo_msg.find(fifo.string()), std::string::npos) << fifo_msg;
}
