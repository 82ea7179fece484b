// JsonWriter's bytes against nlohmann's dump() of the same values: the
// manifest written by hand must be the file nlohmann wrote before, byte for
// byte, and parse back to the same values.
#include "kwheel/base/json_text.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "kwheel/base/text.hpp"

using namespace kwheel;
using nlohmann::json;

namespace {

std::string json_quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace

TEST(JsonText, EveryByteBelow0x80IsEscapedAsNlohmannDoes) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = "a" + std::string(1, static_cast<char>(c)) + "b";
    EXPECT_EQ(json_quoted(s), json(s).dump()) << c;
  }
}

TEST(JsonText, Utf8PassesAsIt) {
  for (std::string s : {"caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xed\x9f\xbf", "", "\"quoted\" \\ path"})
    EXPECT_EQ(json_quoted(s), json(s).dump()) << s;
}

TEST(JsonText, RandomValidStringsMatchNlohmann) {
  std::mt19937 rng(46);
  const std::vector<std::string> pieces = {"a", "\"", "\\", "\n", "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "/", " "};
  for (int round = 0; round < 2000; ++round) {
    std::string s;
    for (int n = rng() % 12; n > 0; --n) s += pieces[rng() % pieces.size()];
    EXPECT_EQ(json_quoted(s), json(s).dump()) << printable(s);
    EXPECT_EQ(json::parse(json_quoted(s)).get<std::string>(), s);
  }
}

TEST(JsonText, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  // Where nlohmann's dump() throws, the text is still JSON, and still UTF-8.
  for (std::string s : {"\xff", "a\xc3", "\xed\xa0\x80", "\xc0\xaf", "x\x80y", "\xf4\x90\x80\x80"}) {
    EXPECT_THROW((void)json(s).dump(), json::type_error) << printable(s);
    const std::string q = json_quoted(s);
    EXPECT_TRUE(valid_utf8(q)) << printable(s);
    const std::string back = json::parse(q).get<std::string>();
    EXPECT_NE(back.find("\xef\xbf\xbd"), std::string::npos) << printable(s);
  }
  EXPECT_EQ(json::parse(json_quoted("x\x80y")).get<std::string>(), "x\xef\xbf\xbdy");
}

TEST(JsonWriter, ObjectsArraysAndNumbersAreNlohmannsCompactForm) {
  std::string out;
  JsonWriter w(out);
  w.begin_object().field("a", std::string("x")).key("b").begin_array().end_array();
  w.key("c").begin_object().field("n", uint64_t{18446744073709551615ull}).field("m", int64_t{-5}).end_object();
  w.key("d").strings({"p", "q"}).field("e", true).field("f", false).key("g").begin_object().end_object().end_object();
  const json expected = {{"a", "x"}, {"b", json::array()}, {"c", {{"n", 18446744073709551615ull}, {"m", -5}}}, {"d", {"p", "q"}},
                         {"e", true}, {"f", false}, {"g", json::object()}};
  // nlohmann sorts keys: "m" < "n" inside c.
  EXPECT_EQ(json::parse(out), expected);
  EXPECT_EQ(out, R"({"a":"x","b":[],"c":{"n":18446744073709551615,"m":-5},"d":["p","q"],"e":true,"f":false,"g":{}})");
}

TEST(JsonWriter, ArraysOfObjectsTakeCommasBetweenMembers) {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  for (int i = 0; i < 3; ++i) w.begin_object().field("i", int64_t{i}).end_object();
  w.value("s").value(uint64_t{7}).end_array();
  EXPECT_EQ(out, R"([{"i":0},{"i":1},{"i":2},"s",7])");
  EXPECT_NO_THROW((void)json::parse(out));
}
