// URLs as the HTTP layer handles them: the Link header of paginated
// listings (RFC 8288, as huggingface_hub reads it) and URLs fit for messages.
#include "kwheel/hub/url.hpp"

#include <gtest/gtest.h>

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

TEST(DisplayUrl, DropsUserInfo) {
  EXPECT_EQ(display_url("https://user:pw@hub.example:8443/api/x?y=1"), "https://hub.example:8443/api/x?y=1");
  EXPECT_EQ(display_url("http://user@h/a@b"), "http://h/a@b");
  EXPECT_EQ(display_url("http://h/path?q=a@b"), "http://h/path?q=a@b");
  EXPECT_EQ(display_url("not a url"), "not a url");
}
