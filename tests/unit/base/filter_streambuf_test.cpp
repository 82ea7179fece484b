#include "kwheel/base/filter_streambuf.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>
#include <thread>
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

std::size_t through_newline(std::string_view waiting) {
  const auto end = waiting.rfind('\n');
  return end == std::string_view::npos ? 0 : end + 1;
}

std::string unchanged(std::string chunk) { return chunk; }

// std::cerr's filters are written from the build's worker threads: each
// line written whole arrives whole, none lost, none torn (the unguarded
// buffer tore them, and ASan saw the copy read past it).
TEST_F(FilterStreambufTest, LinesFromManyThreadsArriveWhole) {
  constexpr int kThreads = 8, kLines = 2000;
  {
    FilterStreambuf filter(&sink, through_newline, unchanged);
    std::ostream out(&filter);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&out, t] {
        for (int i = 0; i < kLines; ++i) out << "kwheel: warning: thread " + std::to_string(t) + " line " + std::to_string(i) + "\n";
      });
    for (auto& th : threads) th.join();
  }
  std::map<int, int> next;  // per thread, the line expected next: each thread's lines in order
  std::istringstream lines(sink.text);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "kwheel: warning: thread %d line %d", &t, &i), 2) << line;
    ASSERT_EQ(line, "kwheel: warning: thread " + std::to_string(t) + " line " + std::to_string(i));
    ASSERT_EQ(next[t]++, i) << line;
  }
  EXPECT_EQ(count, kThreads * kLines);
}

}  // namespace
}  // namespace kwheel
