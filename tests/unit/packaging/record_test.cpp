// RECORD as CSV. Expected lines are what CPython 3.11's
//   csv.writer(f, delimiter=",", quotechar='"', lineterminator="\n")
// (pypa/wheel's and installer's writer) produces for the same rows; they were
// generated with that Python and pasted here.
#include "kwheel/packaging/record.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

TEST(Record, PlainFieldsUnquoted) {
  EXPECT_EQ(csv_field("img2gray/_ops.py"), "img2gray/_ops.py");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field(" lead"), " lead");  // QUOTE_MINIMAL leaves spaces alone
  EXPECT_EQ(csv_field("a;b"), "a;b");
}

TEST(Record, QuotesLikePythonCsv) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(csv_field("a\nb"), "\"a\nb\"");
  EXPECT_EQ(csv_field("\"") , "\"\"\"\"");
}

TEST(Record, CarriageReturnIsQuotedForRoundTrip) {
  // CPython 3.11 with lineterminator="\n" writes a lone '\r' unquoted, which
  // its own reader then treats as a line end. Quoting keeps the row intact
  // (csv.reader reads "a\rb" back). Paths with '\r' never reach RECORD
  // anyway: repo_layout refuses control characters.
  EXPECT_EQ(csv_field("a\rb"), "\"a\rb\"");
  auto rows = parse_record(record_line({"a\rb", "sha256=x", 1}), "t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].path, "a\rb");
}

TEST(Record, NonAsciiPassesThroughAsUtf8) {
  EXPECT_EQ(csv_field("img2gray/\xc3\xa9t\xc3\xa9.py"), "img2gray/\xc3\xa9t\xc3\xa9.py");
  // "é€,\"" -> "\"é€,\"\"\"" as Python writes it
  EXPECT_EQ(csv_field("\xc3\xa9\xe2\x82\xac,\""), "\"\xc3\xa9\xe2\x82\xac,\"\"\"");
}

TEST(Record, LinesAndRecordOwnRow) {
  EXPECT_EQ(record_line({"a,b", "x", 1}), "\"a,b\",x,1\n");
  EXPECT_EQ(record_line({"a\"b", "x", 2}), "\"a\"\"b\",x,2\n");
  EXPECT_EQ(record_line({"pkg/empty.py", "sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU", 0}),
            "pkg/empty.py,sha256=47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU,0\n");
  EXPECT_EQ(record_line({"x-1.0.dist-info/RECORD", "", std::nullopt}), "x-1.0.dist-info/RECORD,,\n");
  EXPECT_EQ(format_record({{"a", "h", 1}, {"b/RECORD", "", std::nullopt}}), "a,h,1\nb/RECORD,,\n");
  EXPECT_EQ(format_record({}), "");
}

TEST(Record, RoundTrip) {
  std::vector<RecordEntry> rows = {
      {"img2gray/__init__.py", "sha256=ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0", 3},
      {"img2gray/a,b.py", "sha256=AAAA", 10},
      {"img2gray/say \"hi\".py", "sha256=BBBB", 0},
      {"img2gray/\xc3\xa9\xe2\x82\xac.py", "sha256=CCCC", 18446744073709551615ull},
      {"img2gray/multi\nline", "sha256=DDDD", 7},
      {"img2gray-1.0.dist-info/RECORD", "", std::nullopt},
  };
  EXPECT_EQ(parse_record(format_record(rows), "t"), rows);
}

TEST(Record, ParsesCrlfAndBlankLines) {
  auto rows = parse_record("a,h,1\r\n\r\nb,,\r\n", "t");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (RecordEntry{"a", "h", 1}));
  EXPECT_EQ(rows[1], (RecordEntry{"b", "", std::nullopt}));
  // No final newline
  auto last = parse_record("a,h,1", "t");
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].size, 1u);
}

TEST(Record, ParsesQuotedFieldsPythonWrote) {
  // Exactly what CPython's csv.writer wrote for these rows (see file header).
  auto rows = parse_record("\"a,b\",x,1\n\"a\"\"b\",x,2\n\"a\nb\",,\n\"\xc3\xa9\xe2\x82\xac,\"\"\",,\n", "t");
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].path, "a,b");
  EXPECT_EQ(rows[1].path, "a\"b");
  EXPECT_EQ(rows[2].path, "a\nb");
  EXPECT_EQ(rows[3].path, "\xc3\xa9\xe2\x82\xac,\"");
  EXPECT_FALSE(rows[3].size);
}

TEST(Record, MalformedInputNamesSourceAndLine) {
  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"a,h,1\n\"unterminated,h,1\n", "line 2: unterminated quoted field"},
      {"a,h\n", "line 1: expected 3 fields, got 2"},
      {"a,h,1,extra\n", "expected 3 fields, got 4"},
      {"a,h,12x\n", "size '12x' is not a number"},
      {"a,h,-1\n", "size '-1' is not a number"},
      {"a,h,99999999999999999999999\n", "is not a number"},
  };
  for (const auto& c : cases) {
    try {
      parse_record(c.text, "demo.whl");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::input);
      std::string what = e.what();
      EXPECT_NE(what.find("demo.whl"), std::string::npos) << what;
      EXPECT_NE(what.find(c.why), std::string::npos) << what;
    }
  }
}
