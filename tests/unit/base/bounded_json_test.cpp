// JSON parsed with bounds: ordinary documents parse; one past a limit is
// refused with an Error of the caller's kind that names where it came from
// and what to do; text that is not JSON (a body cut short) is nullopt.
#include "kwheel/base/bounded_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "error_support.hpp"

using namespace kwheel;

namespace {

const JsonLimits kSmall{1 << 20, 4, 10};
const std::string kWhat = "the answer from https://hub.test/api/x";
const std::string kFix = "ask the Hub's admins";

std::optional<nlohmann::json> parse(const std::string& body, const JsonLimits& limits = kSmall) {
  return parse_bounded_json(body, limits, ErrorKind::network, kWhat, kFix);
}

std::string refusal(const std::string& body, const JsonLimits& limits = kSmall) {
  return kwheel::testing::error_of([&] { parse(body, limits); }, ErrorKind::network);
}

}  // namespace

TEST(BoundedJson, OrdinaryJsonParses) {
  const auto j = parse(R"({"sha": "abc", "siblings": [{"rfilename": "a"}, 2, true, null]})", JsonLimits{1 << 20, 64, 1000});
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["sha"], "abc");
  EXPECT_EQ((*j)["siblings"][0]["rfilename"], "a");
  EXPECT_EQ((*j)["siblings"][1], 2);
  EXPECT_EQ((*j)["siblings"].size(), 4u);
}

TEST(BoundedJson, ExactlyAtTheLimitsStillParses) {
  // Four levels of nesting; 10 values (keys count).
  EXPECT_TRUE(parse("[[[[]]]]").has_value());
  EXPECT_TRUE(parse("[1,2,3,4,5,6,7,8,9]").has_value());  // the array and 9 numbers
  EXPECT_TRUE(parse(R"({"a":1,"b":2,"c":3,"d":4})").has_value());  // the object, 4 keys, 4 values
}

TEST(BoundedJson, TooDeepIsRefusedNamingTheOrigin) {
  EXPECT_EQ(refusal("[[[[[]]]]]"), kWhat + " nests deeper than 4 levels; " + kFix);
  EXPECT_EQ(refusal(R"({"a":{"b":{"c":{"d":{"e":1}}}}})"), kWhat + " nests deeper than 4 levels; " + kFix);
}

TEST(BoundedJson, TooManyValuesIsRefusedNamingTheOrigin) {
  EXPECT_EQ(refusal("[1,2,3,4,5,6,7,8,9,10]"), kWhat + " holds more than 10 JSON values; " + kFix);
  EXPECT_EQ(refusal(R"({"a":1,"b":2,"c":3,"d":4,"e":5})"), kWhat + " holds more than 10 JSON values; " + kFix);
}

TEST(BoundedJson, TooLargeIsRefusedBeforeParsing) {
  const JsonLimits one_mib{1 << 20, 64, 1000000};
  const std::string big = "\"" + std::string((1 << 20) - 1, 'x') + "\"";  // one byte over, and valid JSON
  EXPECT_EQ(refusal(big, one_mib), kWhat + " is larger than 1 MiB; " + kFix);
  EXPECT_FALSE(parse(big.substr(1), one_mib).has_value());  // at the limit: parsed (and not JSON)
}

TEST(BoundedJson, TheCallersKindIsKept) {
  const std::string msg = kwheel::testing::error_of(
      [] { parse_bounded_json("[[[[[[]]]]]]", kSmall, ErrorKind::input, "index page 'p'", "fix it"); }, ErrorKind::input);
  EXPECT_EQ(msg, "index page 'p' nests deeper than 4 levels; fix it");
}

TEST(BoundedJson, TextThatIsNotJsonIsNullopt) {
  EXPECT_FALSE(parse(R"({"sha": "ab)").has_value());  // cut short
  EXPECT_FALSE(parse("<html>503</html>").has_value());
  EXPECT_FALSE(parse("").has_value());
  EXPECT_FALSE(parse("[1] [2]").has_value());  // trailing garbage
}
