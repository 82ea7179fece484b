#include "kwheel/base/byte_reader.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kwheel {
namespace {

struct Refused {
  std::uint64_t off, len;
  std::string what;
};

// A refusal that throws what it was told, so a test can check it.
ByteReader::Refusal record() {
  return [](std::uint64_t off, std::uint64_t len, std::string_view what) { throw Refused{off, len, std::string(what)}; };
}

std::vector<std::byte> bytes(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

const std::vector<std::byte> kEight = bytes({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88});

TEST(ByteReader, LittleEndian) {
  const ByteReader r(kEight, ByteOrder::little, record());
  EXPECT_EQ(r.u8(0, "a"), 0x01u);
  EXPECT_EQ(r.u16(0, "a"), 0x0201u);
  EXPECT_EQ(r.u16(1, "a"), 0x0302u);  // no alignment needed
  EXPECT_EQ(r.u32(0, "a"), 0x04030201u);
  EXPECT_EQ(r.u64(0, "a"), 0x8807060504030201u);
  EXPECT_EQ(r.get<std::int64_t>(0, "a"), static_cast<std::int64_t>(0x8807060504030201u));
  EXPECT_EQ(r.get<std::int32_t>(4, "a"), static_cast<std::int32_t>(0x88070605u));
  EXPECT_LT(r.get<std::int32_t>(4, "a"), 0);
}

TEST(ByteReader, BigEndian) {
  const ByteReader r(kEight, ByteOrder::big, record());
  EXPECT_EQ(r.u8(7, "a"), 0x88u);
  EXPECT_EQ(r.u16(0, "a"), 0x0102u);
  EXPECT_EQ(r.u32(4, "a"), 0x05060788u);
  EXPECT_EQ(r.u64(0, "a"), 0x0102030405060788u);
  EXPECT_EQ(r.get<std::int16_t>(6, "a"), static_cast<std::int16_t>(0x0788));
}

TEST(ByteReader, OrderCanChangeAfterTheHeader) {
  ByteReader r(kEight, ByteOrder::little, record());
  EXPECT_EQ(r.order(), ByteOrder::little);
  r.set_order(ByteOrder::big);
  EXPECT_EQ(r.order(), ByteOrder::big);
  EXPECT_EQ(r.u32(0, "a"), 0x01020304u);
}

TEST(ByteReader, ReadsToTheLastByteAndNoFurther) {
  const ByteReader r(kEight, ByteOrder::little, record());
  EXPECT_EQ(r.size(), 8u);
  EXPECT_EQ(r.u32(4, "tail"), 0x88070605u);
  try {
    r.u32(5, "e_phoff");
    ADD_FAILURE() << "read past the end";
  } catch (const Refused& e) {
    EXPECT_EQ(e.off, 5u);
    EXPECT_EQ(e.len, 4u);
    EXPECT_EQ(e.what, "e_phoff");
  }
  EXPECT_THROW(r.u8(8, "a"), Refused);
  EXPECT_THROW(r.u64(1, "a"), Refused);
}

// Offsets come from hostile files: a sum that would wrap must not pass.
TEST(ByteReader, HugeOffsetsDoNotWrap) {
  const ByteReader r(kEight, ByteOrder::little, record());
  const auto max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_FALSE(r.contains(max, 2));
  EXPECT_FALSE(r.contains(2, max));
  EXPECT_FALSE(r.contains(9, 0));
  EXPECT_TRUE(r.contains(8, 0));
  EXPECT_TRUE(r.contains(0, 8));
  EXPECT_FALSE(r.contains(1, 8));
  EXPECT_THROW(r.u16(max, "a"), Refused);
  EXPECT_THROW(r.range(4, max - 2, "a"), Refused);
}

TEST(ByteReader, Range) {
  const ByteReader r(kEight, ByteOrder::big, record());
  const auto part = r.range(2, 3, "id");
  ASSERT_EQ(part.size(), 3u);
  EXPECT_EQ(part.data(), kEight.data() + 2);
  EXPECT_EQ(r.range(8, 0, "empty").size(), 0u);
  try {
    r.range(6, 3, "entry 0's id");
    ADD_FAILURE() << "range past the end";
  } catch (const Refused& e) {
    EXPECT_EQ(e.off, 6u);
    EXPECT_EQ(e.len, 3u);
    EXPECT_EQ(e.what, "entry 0's id");
  }
}

TEST(ByteReader, EmptyRangeRefusesEveryRead) {
  const ByteReader r({}, ByteOrder::little, record());
  EXPECT_EQ(r.size(), 0u);
  EXPECT_THROW(r.u8(0, "a"), Refused);
}

// A refusal that forgets to throw must not let the read go ahead.
TEST(ByteReader, ARefusalThatReturnsStillStopsTheRead) {
  int calls = 0;
  const ByteReader r(kEight, ByteOrder::little, [&](std::uint64_t, std::uint64_t, std::string_view) { ++calls; });
  EXPECT_THROW(r.u64(4, "a"), std::logic_error);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace kwheel
