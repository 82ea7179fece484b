// Status and suffix printers look their names up in a table: the lookup
// finds every listed value and falls back for one the table lacks.
#include "kwheel/base/enum_name.hpp"

#include <gtest/gtest.h>

#include "kwheel/factory/build.hpp"
#include "kwheel/index/publish.hpp"
#include "kwheel/validate/validate.hpp"

using namespace kwheel;

namespace {

enum class Color { red, green, blue };
constexpr EnumName<Color> kColors[] = {{Color::red, "red"}, {Color::green, "green"}};

}  // namespace

TEST(EnumName, FindsListedValuesAndFallsBackForOthers) {
  EXPECT_EQ(enum_name(Color::red, kColors), "red");
  EXPECT_EQ(enum_name(Color::green, kColors), "green");
  EXPECT_EQ(enum_name(Color::blue, kColors), "?");
  EXPECT_EQ(enum_name(Color::blue, kColors, "none"), "none");
  static_assert(enum_name(Color::green, kColors) == "green", "usable at compile time");
}

// The names the table and --json reports print, which scripts and the
// integration tests read.
TEST(EnumName, StatusPrintersNameEveryStatus) {
  EXPECT_STREQ(status_name(VariantResult::Status::built), "built");
  EXPECT_STREQ(status_name(VariantResult::Status::failed), "failed");
  EXPECT_STREQ(status_name(VariantResult::Status::filtered), "filtered");
  EXPECT_STREQ(status_name(UploadResult::Status::uploaded), "uploaded");
  EXPECT_STREQ(status_name(UploadResult::Status::exists), "exists");
  EXPECT_STREQ(status_name(UploadResult::Status::failed), "failed");
  EXPECT_STREQ(status_name(ValidationResult::Status::pass), "PASS");
  EXPECT_STREQ(status_name(ValidationResult::Status::fail), "FAIL");
  EXPECT_STREQ(status_name(ValidationResult::Status::skip), "SKIP");
}
