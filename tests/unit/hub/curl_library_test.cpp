// libcurl's table (curl_library.hpp): every function bound, whether this
// build links libcurl or loads it on first use, and calls through it reach
// libcurl itself (its own parser and version string answer, not a stub).
#include "kwheel/hub/curl_library.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kwheel/hub/curl_handles.hpp"

using namespace kwheel;

TEST(CurlLibrary, EveryFunctionIsBound) {
  const curl::Library& lib = curl::library();
#define KWHEEL_CURL_CHECK(member, function) EXPECT_NE(lib.member, nullptr) << #function;
  KWHEEL_CURL_FUNCTIONS(KWHEEL_CURL_CHECK)
#undef KWHEEL_CURL_CHECK
  EXPECT_EQ(&curl::library(), &lib);  // bound once
}

TEST(CurlLibrary, CallsReachLibcurl) {
  const curl::Library& lib = curl::library();
  curl::Url u(lib.url());
  ASSERT_TRUE(u);
  ASSERT_EQ(lib.url_set(u.get(), CURLUPART_URL, "HTTPS://Example.COM:8443/a/../b?x=1", 0), CURLUE_OK);
  char* raw = nullptr;
  ASSERT_EQ(lib.url_get(u.get(), CURLUPART_URL, &raw, 0), CURLUE_OK);
  curl::String url(raw);
  EXPECT_EQ(std::string(url.get()), "https://Example.COM:8443/b?x=1");  // libcurl's normalisation: the scheme lowered, dot segments gone
  EXPECT_EQ(std::string(lib.easy_strerror(CURLE_COULDNT_CONNECT)), "Couldn't connect to server");
  EXPECT_EQ(lib.getdate("Wed, 21 Oct 2015 07:28:00 GMT", nullptr), 1445412480);
}
