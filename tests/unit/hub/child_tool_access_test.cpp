// What a child tool is handed: logins looked up by index URL (with or
// without the final slash, one index to pip and uv), put into a URL's
// userinfo percent-encoded (RFC 3986 3.2.1: ':' '@' '/' must be), and URLs
// that carry userinfo recognized so they are never written into a file.
#include "kwheel/hub/child_tool_access.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

TEST(ChildToolAccess, LoginByIndexUrlEitherSlash) {
  ChildToolAccess a;
  a.logins.emplace("https://pypi.example.com/simple/", IndexLogin{"ci", Secret("pw")});
  ASSERT_NE(login_for(a, "https://pypi.example.com/simple/"), nullptr);
  ASSERT_NE(login_for(a, "https://pypi.example.com/simple"), nullptr);
  EXPECT_EQ(login_for(a, "https://pypi.example.com/other/"), nullptr);
  EXPECT_EQ(login_for(a, "https://evil.example.com/simple/"), nullptr);
}

TEST(ChildToolAccess, UserinfoPercentEncoded) {
  const IndexLogin login{"ci@team", Secret("p:a/s@s w")};
  EXPECT_EQ(url_with_login("https://pypi.example.com:8443/simple/", login), "https://ci%40team:p%3Aa%2Fs%40s%20w@pypi.example.com:8443/simple/");
  EXPECT_EQ(url_with_login("http://h/simple/", IndexLogin{"__token__", Secret()}), "http://__token__@h/simple/");
  // Registered: an error quoting the URL does not show the password.
  const std::string shown = Error(ErrorKind::network, "failed: https://ci%40team:p%3Aa%2Fs%40s%20w@pypi.example.com/").what();
  EXPECT_EQ(shown.find("p%3Aa%2Fs%40s%20w"), std::string::npos) << shown;
}

TEST(ChildToolAccess, HasUserinfo) {
  EXPECT_TRUE(has_userinfo("https://u:p@h/simple/"));
  EXPECT_TRUE(has_userinfo("https://u@h/"));
  EXPECT_FALSE(has_userinfo("https://h/simple/"));
  EXPECT_FALSE(has_userinfo("https://h/packages/a@1.whl"));  // '@' in the path is not userinfo
  EXPECT_FALSE(has_userinfo("https://h?x=a@b"));
  EXPECT_FALSE(has_userinfo("/local/path@x"));
  EXPECT_FALSE(has_userinfo(""));
}
