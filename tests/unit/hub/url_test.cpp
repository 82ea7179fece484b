// URLs as the HTTP layer handles them: the Link header of paginated
// listings, URLs fit for messages, origins, redirect targets and encoded
// paths. Expected forms come from RFC 3986 (resolution, percent-encoding),
// RFC 6454 (origins) and RFC 8288 (Link), as huggingface_hub reads them.
#include "kwheel/hub/url.hpp"

#include <gtest/gtest.h>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"

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
  // However the URL is written (base/url_userinfo has the rest).
  EXPECT_EQ(display_url("HTTPS://u:pw@h/simple/"), "HTTPS://h/simple/");
  EXPECT_EQ(display_url("ftp://u:pw@h/"), "ftp://h/");
  EXPECT_EQ(display_url("u:pw@h/simple/"), "h/simple/");
  EXPECT_EQ(display_url("https://u%3Apw%40h/"), "https://h/");
}

TEST(UrlOrigin, SchemeHostAndPortLowerCasedWithTheDefaultPort) {
  // RFC 6454: the origin is (scheme, host, port); case does not make another one.
  EXPECT_EQ(url_origin("https://huggingface.co/api/models/x"), "https://huggingface.co:443");
  EXPECT_EQ(url_origin("HTTP://Hub.Example/a"), "http://hub.example:80");
  EXPECT_EQ(url_origin("http://127.0.0.1:8000/simple/"), "http://127.0.0.1:8000");
  EXPECT_NE(url_origin("https://huggingface.co/x"), url_origin("https://cdn-lfs.huggingface.co/x"));
  EXPECT_NE(url_origin("http://h:8000/"), url_origin("http://h:8001/"));
  EXPECT_EQ(url_origin("not a url"), "");
}

TEST(ResolveUrl, ReferencesAsRfc3986ResolvesThem) {
  // RFC 3986 section 5.4.1's normal examples.
  const std::string base = "http://a/b/c/d;p?q";
  EXPECT_EQ(resolve_url(base, "g"), "http://a/b/c/g");
  EXPECT_EQ(resolve_url(base, "./g"), "http://a/b/c/g");
  EXPECT_EQ(resolve_url(base, "/g"), "http://a/g");
  EXPECT_EQ(resolve_url(base, "g?y"), "http://a/b/c/g?y");
  EXPECT_EQ(resolve_url(base, "../g"), "http://a/b/g");
  EXPECT_EQ(resolve_url(base, "../../g"), "http://a/g");
  EXPECT_EQ(resolve_url(base, "https://cdn.example/f?sig=1"), "https://cdn.example/f?sig=1");
}

TEST(ResolveUrl, NonHttpTargetIsRefused) {
  const std::string msg =
      kwheel::testing::error_of([] { resolve_url("https://hub.example/x", "file:///etc/passwd"); }, ErrorKind::network);
  EXPECT_NE(msg.find("https://hub.example/x"), std::string::npos) << msg;
}

TEST(EncodePath, KeepsSlashesAndUnreservedBytes) {
  // RFC 3986 2.3: unreserved characters stay; everything else is %HH, upper-case hex (2.1).
  EXPECT_EQ(encode_path("build/torch-cuda_12.4~x/k.so"), "build/torch-cuda_12.4~x/k.so");
  EXPECT_EQ(encode_path("a b/c#d?e%f"), "a%20b/c%23d%3Fe%25f");
  EXPECT_EQ(encode_path("\xc3\xa9"), "%C3%A9");
  EXPECT_EQ(encode_component("a/b c"), "a%2Fb%20c");
}

TEST(UrlCredentials, PasswordOfAnEndpointIsRedactedDecodedAndAsWritten) {
  register_url_credentials("https://ci:urlTest%40Pass_31d7@pypi.example/legacy/");
  EXPECT_EQ(std::string(Error(ErrorKind::auth, "echo urlTest@Pass_31d7").what()), "echo ***");
  EXPECT_EQ(std::string(Error(ErrorKind::auth, "echo urlTest%40Pass_31d7").what()), "echo ***");
  register_url_credentials("https://pypi.example/no-user-info/");  // nothing to register: harmless
  EXPECT_EQ(std::string(Error(ErrorKind::auth, "echo ci").what()), "echo ci");
}
