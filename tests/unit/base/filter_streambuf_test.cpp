#include "kwheel/base/filter_streambuf.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace kwheel {
namespace {

// A target that records what reaches it and how often it is flushed.
class Sink : public std::streambuf {
 public:
  std::string text;
  int syncs = 0;

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) text += traits_type::to_char_type(c);
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    text.append(s, static_cast<std::size_t>(n));
    return n;
  }
  int sync() override {
    ++syncs;
    return 0;
  }
};

// Chunks end after a ';'; each one the transform sees is recorded and
// passed on in brackets, so the test sees where the filter cut.
std::vector<std::string> seen;

std::size_t through_semicolon(std::string_view waiting) {
  const auto end = waiting.rfind(';');
  return end == std::string_view::npos ? 0 : end + 1;
}

std::string bracket(std::string chunk) {
  seen.push_back(chunk);
  return "[" + chunk + "]";
}

class FilterStreambufTest : public ::testing::Test {
 protected:
  void SetUp() override { seen.clear(); }
  Sink sink;
};

TEST_F(FilterStreambufTest, ReadyChunksPassThroughTheTransform) {
  FilterStreambuf filter(&sink, through_semicolon, bracket);
  std::ostream out(&filter);
  out << "a;b";
  EXPECT_EQ(sink.text, "[a;]");
  out << "c;d;e";
  // Everything ready at once is one chunk: "bc;d;", not "bc;" and "d;".
  EXPECT_EQ(sink.text, "[a;][bc;d;]");
  EXPECT_EQ(seen, (std::vector<std::string>{"a;", "bc;d;"}));
}

TEST_F(FilterStreambufTest, SingleCharactersAreBufferedToo) {
  FilterStreambuf filter(&sink, through_semicolon, bracket);
  std::ostream out(&filter);
  out.put('x');
  out.put('y');
  EXPECT_EQ(sink.text, "");
  out.put(';');
  EXPECT_EQ(sink.text, "[xy;]");
}

// A flush must not cut what waits: the transform would see it in pieces.
TEST_F(FilterStreambufTest, FlushReachesTheTargetButKeepsWhatWaits) {
  FilterStreambuf filter(&sink, through_semicolon, bracket);
  std::ostream out(&filter);
  out << "half" << std::flush;
  EXPECT_EQ(sink.text, "");
  EXPECT_EQ(sink.syncs, 1);
  out << " more;";
  EXPECT_EQ(sink.text, "[half more;]");
}

TEST_F(FilterStreambufTest, TheEndPassesOnWhatStillWaits) {
  {
    FilterStreambuf filter(&sink, through_semicolon, bracket);
    std::ostream out(&filter);
    out << "a;tail";
    EXPECT_EQ(sink.syncs, 0);
  }
  EXPECT_EQ(sink.text, "[a;][tail]");
  EXPECT_EQ(sink.syncs, 1);
}

TEST_F(FilterStreambufTest, NothingWrittenTransformsNothing) {
  { FilterStreambuf filter(&sink, through_semicolon, bracket); }
  EXPECT_EQ(sink.text, "");
  EXPECT_TRUE(seen.empty());
  EXPECT_EQ(sink.syncs, 1);
}

}  // namespace
}  // namespace kwheel
