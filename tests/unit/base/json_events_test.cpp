// read_json_events against nlohmann::json::sax_parse (strict), the reader
// kwheel used before and the oracle here: on the same text both accept or
// both refuse, and accepted, they give the same events with the same values.
#include "kwheel/base/json_events.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "kwheel/base/text.hpp"

using namespace kwheel;
using nlohmann::json;

namespace {

// Each event as a line: what both readers are compared by.
struct Ours : JsonEvents {
  std::string log;
  bool null() override { return log += "null\n", true; }
  bool boolean(bool b) override { return log += b ? "true\n" : "false\n", true; }
  bool number_unsigned(uint64_t n) override { return log += "u " + std::to_string(n) + "\n", true; }
  bool number_integer(int64_t n) override { return log += "i " + std::to_string(n) + "\n", true; }
  bool number_float(double, std::string_view text) override { return log += "f " + std::string(text) + "\n", true; }
  bool string(std::string& s) override { return log += "s " + s + "\n", true; }
  bool key(std::string& k) override { return log += "k " + k + "\n", true; }
  bool start_object() override { return log += "{\n", true; }
  bool end_object() override { return log += "}\n", true; }
  bool start_array() override { return log += "[\n", true; }
  bool end_array() override { return log += "]\n", true; }
};

struct Theirs : nlohmann::json_sax<json> {
  std::string log;
  bool null() override { return log += "null\n", true; }
  bool boolean(bool b) override { return log += b ? "true\n" : "false\n", true; }
  bool number_unsigned(number_unsigned_t n) override { return log += "u " + std::to_string(n) + "\n", true; }
  bool number_integer(number_integer_t n) override { return log += "i " + std::to_string(n) + "\n", true; }
  bool number_float(number_float_t, const string_t& text) override { return log += "f " + text + "\n", true; }
  bool string(string_t& s) override { return log += "s " + s + "\n", true; }
  bool binary(binary_t&) override { return false; }
  bool key(string_t& k) override { return log += "k " + k + "\n", true; }
  bool start_object(std::size_t) override { return log += "{\n", true; }
  bool end_object() override { return log += "}\n", true; }
  bool start_array(std::size_t) override { return log += "[\n", true; }
  bool end_array() override { return log += "]\n", true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

void same_as_nlohmann(const std::string& text) {
  Ours ours;
  Theirs theirs;
  const bool a = read_json_events(text, ours);
  bool b = json::sax_parse(text, &theirs, json::input_format_t::json, /*strict=*/true);
  // One difference, on purpose: nlohmann's lexer takes a NUL byte for the
  // end of the input, and accepts "{}\0" followed by anything; this reader
  // refuses what follows the value, NUL or not.
  if (b && text.find('\0') != std::string::npos) b = false;
  ASSERT_EQ(a, b) << "'" << printable(text) << "'";
  if (a) EXPECT_EQ(ours.log, theirs.log) << "'" << printable(text) << "'";
}

}  // namespace

TEST(JsonEvents, AgreesWithNlohmannOnEdgeCases) {
  for (const char* text :
       {"", " ", "{}", "[]", "[ ]", "{ }", "[1]", "[1,]", "[,1]", "{,}", "[1 2]", "{\"a\":1,}", "{\"a\" 1}", "{\"a\":}", "{1:2}", "[[[]]]", "[[],[]]",
        "0", "-0", "01", "-", "1.", ".5", "1.5", "1e5", "1E+5", "1e-5", "1e", "1e400", "-1e400", "18446744073709551615", "18446744073709551616",
        "-9223372036854775808", "-9223372036854775809", "9223372036854775808", "true", "tru", "false", "null", "nul", "True", "\"\"", "\"a",
        "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\\x\"", "\"\\u0041\"", "\"\\u00e9\"", "\"\\u0000\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ude00\"",
        "\"\\ud83dx\"", "\"\\ud83d\\u0041\"", "\"\\u12\"", "\"\\uZZZZ\"", "\"caf\xc3\xa9\"", "\"\xc3\"", "\"\xff\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"",
        "\"\x01\"", "\"\x7f\"", "\"tab\there\"", "{} x", "{}{}", "[] ", "\xef\xbb\xbf{}", "\xef\xbb{}", " \xef\xbb\xbf{}", "{\"a\":[1,{\"b\":null}]}",
        "[1,2,3]\n", "\t\r\n[\t1\r,\n2 ]", "{\"k\":\"v\",\"k\":\"w\"}", "[\"\\u002F\"]", "/* */{}", "{}\0"})
    same_as_nlohmann(text);
  same_as_nlohmann(std::string("[\"a\0b\"]", 7));
  same_as_nlohmann(std::string("{}\0", 3));
}

TEST(JsonEvents, AgreesWithNlohmannOnMutatedDocuments) {
  // A manifest-like document, bytes replaced, inserted and deleted at
  // random: most mutants are not JSON, some are, and both readers say which.
  const std::string seed =
      R"({"format":"kwheel-index 1","title":"T\u00e9","variants":true,"files":[{"filename":"relu-1-py3-none-any.whl","gpu_code":["sm_90"],)"
      R"("size":42,"neg":-7,"f":1.5e3,"hub":{"repo":"a\/b","url":null},"signature":{"standing":"trusted","summary":"caf\u00e9 \ud83d\ude00"}}]})";
  const std::string alphabet = "{}[]\",:\\0123456789.-+eEtrufalsn \t\n/u\xc3\xa9\xff\x01";
  std::mt19937 rng(2026);
  size_t accepted = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = seed;
    for (int edits = 1 + rng() % 3; edits > 0; --edits) {
      const size_t at = rng() % (text.size() + 1);
      const char c = alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0: if (at < text.size()) text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<long>(at), c); break;
        default: if (at < text.size()) text.erase(at, 1);
      }
    }
    Ours ours;
    if (read_json_events(text, ours)) ++accepted;
    same_as_nlohmann(text);
    if (HasFatalFailure() || HasNonfatalFailure()) return;
  }
  EXPECT_GT(accepted, 1000u);  // the mutants the two agree on include JSON, not only garbage
}

TEST(JsonEvents, AHandlerStopsTheReading) {
  struct StopAtKey : Ours {
    bool key(std::string&) override { return false; }
  } stop;
  EXPECT_FALSE(read_json_events(R"({"a":1})", stop));
  EXPECT_EQ(stop.log, "{\n");
}

TEST(JsonEvents, NestingIsNotBoundedByTheStack) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  Ours ours;
  EXPECT_TRUE(read_json_events(deep, ours));
}
