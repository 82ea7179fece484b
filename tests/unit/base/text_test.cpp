#include "kwheel/base/text.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kwheel/base/error.hpp"

using namespace kwheel;

TEST(Split, KeepsEmptyFields) {
  EXPECT_EQ(split("a..b", '.'), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("", '.'), (std::vector<std::string>{""}));
}

TEST(Printable, KeepsTextAndValidUtf8) {
  for (std::string s : {"plain", "a b\\c 'd'", "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf"})
    EXPECT_EQ(printable(s), s) << s;
}

TEST(Printable, EscapesControlBytes) {
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("x\ny\r\t\x1b[2J\x7f"), "x\\x0ay\\x0d\\x09\\x1b[2J\\x7f");
}

TEST(Printable, EscapesInvalidUtf8ByteByByte) {
  EXPECT_EQ(printable("\xff"), "\\xff");
  EXPECT_EQ(printable("\xc3"), "\\xc3");               // truncated sequence
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");      // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // surrogate U+D800
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xe2\x82z"), "\\xe2\\x82z");    // bad continuation, next byte kept
}

TEST(Printable, AnyBytesGiveOneLineThatJsonAccepts) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  const std::string p = printable(all + all.substr(0, 1) + "\xc3\xa9");
  EXPECT_EQ(p.find('\n'), std::string::npos);
  EXPECT_NO_THROW((void)nlohmann::json(p).dump());
  EXPECT_TRUE(p.ends_with("\xc3\xa9"));
}

TEST(Printable, ErrorMessagesKeepWhatFollowsANul) {
  const kwheel::Error e(kwheel::ErrorKind::input, std::string("file 'a\0b\nc': bad", 17));
  EXPECT_STREQ(e.what(), "file 'a\\x00b\\x0ac': bad");
}

TEST(UnprintableAt, FindsWhatPrintableWouldEscape) {
  EXPECT_EQ(unprintable_at("MIT \xc3\xa9 \xe2\x80\x94"), std::string_view::npos);
  EXPECT_EQ(unprintable_at(""), std::string_view::npos);
  EXPECT_EQ(unprintable_at("ab\x1b"), 2u);
  EXPECT_EQ(unprintable_at(std::string_view("a\0", 2)), 1u);
  EXPECT_EQ(unprintable_at("a\x7f"), 1u);
  EXPECT_EQ(unprintable_at("xy\xc2\x9b"), 2u);  // C1 CSI
  EXPECT_EQ(unprintable_at("x\xc3"), 1u);        // cut short
  EXPECT_EQ(unprintable_at("\t"), 0u);
}

TEST(PercentDecode, HexEscapesOnly) {
  EXPECT_EQ(percent_decode("a%2Fb%41%e2%82%ac"), "a/bA\xe2\x82\xac");
  // Not an escape: kept as written (a file:// URL with "%zz" once ended in
  // std::stoi's invalid_argument, exit 1).
  EXPECT_EQ(percent_decode("/tmp/%zz"), "/tmp/%zz");
  EXPECT_EQ(percent_decode("%4"), "%4");
  EXPECT_EQ(percent_decode("%"), "%");
}

TEST(Printable, EscapesC1ControlsButNotOtherLatin1) {
  EXPECT_EQ(printable("a\xc2\x9b" "31mb"), "a\\xc2\\x9b31mb");  // U+009B, CSI in some terminals
  EXPECT_EQ(printable("caf\xc3\xa9 \xc2\xa0!"), "caf\xc3\xa9 \xc2\xa0!");
}

TEST(ControlEscapingStreambuf, OnlyNewlineAndTabPass) {
  std::ostringstream sink;
  {
    ControlEscapingStreambuf filter(sink.rdbuf());
    std::ostream out(&filter);
    out << "lib\x1b]0;owned\x07.so\n\tok\r\x7f";
    out << "x\xc2";  // a C1 control split across two writes
    out.flush();
    out << "\x9b" "2J caf\xc3\xa9 \xc2";
    out << "\xa0" "end\xc2";  // NBSP split too; then a lone C2 at the very end
  }
  EXPECT_EQ(sink.str(), "lib\\x1b]0;owned\\x07.so\n\tok\\x0d\\x7fx\\xc2\\x9b2J caf\xc3\xa9 \xc2\xa0" "end\xc2");
}

TEST(Text, LastLineSkipsTrailingBreaks) {
  EXPECT_EQ(kwheel::last_line("a\nb\n\n"), "b");
  EXPECT_EQ(kwheel::last_line("only"), "only");
  EXPECT_EQ(kwheel::last_line("\r\n\n"), "");
  EXPECT_EQ(kwheel::last_line("x\r\ny\r\n"), "y");
}

TEST(Text, LastLinesJoinTheNonEmptyTail) {
  EXPECT_EQ(kwheel::last_lines("one\n\ntwo  \nthree\r\n", 2), "two | three");
  EXPECT_EQ(kwheel::last_lines("one\ntwo\n", 5), "one | two");
  EXPECT_EQ(kwheel::last_lines("", 3), "");
}

TEST(Text, AsciiLowerFoldsOnlyAscii) {
  EXPECT_EQ(kwheel::ascii_lower("Content-TYPE"), "content-type");
  EXPECT_EQ(kwheel::ascii_lower("\xC3\x89t\xC3\xA9"), "\xC3\x89t\xC3\xA9");  // UTF-8 untouched
}

TEST(Text, TrimTakesAsciiWhitespaceFromBothEnds) {
  EXPECT_EQ(kwheel::trim(" \t token \r\n"), "token");
  EXPECT_EQ(kwheel::trim("a b"), "a b");
  EXPECT_EQ(kwheel::trim(" \v\f "), "");
  EXPECT_EQ(kwheel::trim(""), "");
}

TEST(Text, HexOffsetIsLowercaseWithPrefix) {
  EXPECT_EQ(kwheel::hex_offset(0), "0x0");
  EXPECT_EQ(kwheel::hex_offset(0x1F40), "0x1f40");
  EXPECT_EQ(kwheel::hex_offset(~0ull), "0xffffffffffffffff");
}
