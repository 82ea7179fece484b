#include "kwheel/evidence/format_reader.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <string>

#include "kwheel/base/error.hpp"

namespace kwheel {
namespace {

std::string refusal_of(const auto& read) {
  try {
    read();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    return e.what();
  }
  ADD_FAILURE() << "no refusal";
  return "";
}

TEST(FormatReader, ReadsInsideTheRangeLittleEndian) {
  const std::array<std::byte, 4> b{std::byte{0x78}, std::byte{0x56}, std::byte{0x34}, std::byte{0x12}};
  const FormatReader r(b, "a.dylib", "Mach-O");
  EXPECT_EQ(r.u32(0, "magic"), 0x12345678u);
  EXPECT_EQ(r.name(), "a.dylib");
}

TEST(FormatReader, FailNamesTheFileTheFormatAndTheFix) {
  const std::array<std::byte, 2> b{};
  const FormatReader r(b, "k.dll", "PE");
  EXPECT_EQ(refusal_of([&] { r.fail("no PE signature"); }),
            "k.dll: malformed PE: no PE signature; rebuild it, or leave it out of the wheel");
}

TEST(FormatReader, ReadPastTheEndSaysTheFieldOffsetAndFileSize) {
  const std::array<std::byte, 6> b{};
  const FormatReader r(b, "k.dll", "PE");
  EXPECT_EQ(refusal_of([&] { (void)r.u32(4, "e_lfanew"); }),
            "k.dll: malformed PE: e_lfanew at offset 0x4 runs past the end of the file (6 bytes); rebuild it, or leave "
            "it out of the wheel");
}

TEST(FormatReader, ASliceReadsItsOwnBytesAndSaysWhereInItsRefusals) {
  const std::array<std::byte, 8> b{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0},
                                   std::byte{1}, std::byte{0}, std::byte{0}, std::byte{0}};
  const FormatReader whole(b, "u.dylib", "Mach-O");
  const FormatReader tail = whole.slice(4, 4, "slice 2 of 2 (arm64): ");
  EXPECT_EQ(tail.size(), 4u);
  EXPECT_EQ(tail.u32(0, "cputype"), 1u);
  EXPECT_EQ(refusal_of([&] { (void)tail.u16(3, "ncmds"); }),
            "u.dylib: malformed Mach-O: slice 2 of 2 (arm64): ncmds at offset 0x3 runs past the end of the slice (4 "
            "bytes); rebuild it, or leave it out of the wheel");
  EXPECT_EQ(refusal_of([&] { tail.fail("bad magic"); }),
            "u.dylib: malformed Mach-O: slice 2 of 2 (arm64): bad magic; rebuild it, or leave it out of the wheel");
}

}  // namespace
}  // namespace kwheel
