// The pure parts of the HTTP layer: the Link header of paginated listings,
// and the stall timeout as users give it.
#include "kwheel/http.hpp"

#include <gtest/gtest.h>

#include "kwheel/error.hpp"

using namespace kwheel;

TEST(LinkHeader, NextAsHuggingfaceHubReadsIt) {
  EXPECT_EQ(link_next(R"(<https://huggingface.co/api/models/x/y/tree/main?cursor=abc>; rel="next")"),
            "https://huggingface.co/api/models/x/y/tree/main?cursor=abc");
  EXPECT_EQ(link_next(R"(<https://a/1>; rel="prev", <https://a/3>; rel="next")"), "https://a/3");
  EXPECT_EQ(link_next("</p?c=2> ;\trel = next"), "/p?c=2");
  EXPECT_EQ(link_next("<a<b>; rel=next"), "a<b");  // [^>]* takes the '<'
  EXPECT_EQ(link_next(R"(<https://a/9>; rel="last")"), std::nullopt);
  EXPECT_EQ(link_next(""), std::nullopt);
  EXPECT_EQ(link_next("<unterminated; rel=next"), std::nullopt);
}

TEST(LinkHeader, LongHeaderDoesNotOverflowTheStack) {
  // Found by review while writing the link_header fuzz target: the regex
  // this replaced recursed once per character (a 20 KiB header crashed an
  // ASan build, 100 KiB, which curl passes, a release one).
  const std::string target(200000, 'a');
  EXPECT_EQ(link_next("<" + target + ">; rel=\"next\""), target);
  EXPECT_EQ(link_next(std::string(200000, '<') + ">"), std::nullopt);
  EXPECT_EQ(link_next("<x>" + std::string(200000, ' ') + ";rel=next"), "x");
}

TEST(StallTimeout, WholeSecondsFromOneToAnHour) {
  EXPECT_EQ(parse_stall_timeout("1", "--stall-timeout"), std::chrono::seconds(1));
  EXPECT_EQ(parse_stall_timeout("3600", "--stall-timeout"), std::chrono::seconds(3600));
  for (const char* bad : {"", "0", "-5", "3601", "1.5", "2s", "x", "99999999999999999999"}) {
    try {
      parse_stall_timeout(bad, "KWHEEL_STALL_TIMEOUT");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(std::string(e.what()), "KWHEEL_STALL_TIMEOUT='" + std::string(bad) + "': give whole seconds from 1 to 3600");
    }
  }
}
