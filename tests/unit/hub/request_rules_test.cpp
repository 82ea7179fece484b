// The rules every request follows. Expected values come from RFC 9110
// (which statuses are redirects, Retry-After as delay-seconds or an
// HTTP-date), RFC 7617 (Basic credentials), the fault matrix in
// docs/reliability.md (5 attempts, backoff from 0.5 s doubling to 8 s,
// Retry-After honoured up to 60 s) and huggingface_hub, which retries 429
// and 5xx and sends the token only to the endpoint.
#include "kwheel/hub/request_rules.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <vector>

using namespace kwheel;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

ResponseHead head(long status, std::map<std::string, std::string> headers = {}) {
  ResponseHead h;
  h.status = status;
  h.headers = std::move(headers);
  return h;
}

// An IMF-fixdate (RFC 9110 5.6.7) `from_now` away.
std::string http_date(seconds from_now) {
  const std::time_t when = std::time(nullptr) + from_now.count();
  std::tm tm{};
  ::gmtime_r(&when, &tm);
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon],
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

HttpOptions hub_options(std::string token) {
  HttpOptions o;
  o.auth_origin = "https://huggingface.co:443";
  o.token = Secret(std::move(token));
  return o;
}

}  // namespace

TEST(RequestRules, RetryableStatusesAreTimeoutsRateLimitsAndServerErrors) {
  for (long s : {408L, 429L, 500L, 502L, 503L, 504L, 599L}) EXPECT_TRUE(retryable_status(s)) << s;
  for (long s : {200L, 206L, 301L, 400L, 401L, 403L, 404L, 409L, 416L, 600L}) EXPECT_FALSE(retryable_status(s)) << s;
  // 5xx that say the request cannot succeed there, however often it is sent.
  for (long s : {501L, 505L, 506L, 507L, 508L, 510L, 511L}) EXPECT_FALSE(retryable_status(s)) << s;
}

TEST(RequestRules, RedirectStatusesAreThoseWithALocationToFollow) {
  for (long s : {301L, 302L, 303L, 307L, 308L}) EXPECT_TRUE(redirect_status(s)) << s;
  // 300 offers choices, 304 is a cache answer: neither names one target.
  for (long s : {200L, 300L, 304L, 305L, 400L}) EXPECT_FALSE(redirect_status(s)) << s;
}

TEST(RequestRules, NextStepFollowsRetriesOrAnswers) {
  const NextStep follow = next_step(head(302, {{"location", "../other?x=1"}}), true);
  EXPECT_EQ(follow.kind, NextStep::Kind::follow);
  EXPECT_EQ(follow.location, "../other?x=1");  // unresolved: the caller resolves it

  EXPECT_EQ(next_step(head(302, {{"location", "/x"}}), false).kind, NextStep::Kind::answer);  // uploads
  EXPECT_EQ(next_step(head(307), true).kind, NextStep::Kind::answer);  // no Location: nothing to follow

  const NextStep retry = next_step(head(429, {{"retry-after", "7"}}), true);
  EXPECT_EQ(retry.kind, NextStep::Kind::retry);
  EXPECT_EQ(retry.retry_after, "7");
  EXPECT_EQ(next_step(head(503), false).kind, NextStep::Kind::retry);
  EXPECT_EQ(next_step(head(503), false).retry_after, "");

  EXPECT_EQ(next_step(head(200), true).kind, NextStep::Kind::answer);
  EXPECT_EQ(next_step(head(404), true).kind, NextStep::Kind::answer);
  EXPECT_EQ(next_step(head(401), true).kind, NextStep::Kind::answer);
}

TEST(RequestRules, BackoffDoublesFromHalfASecondUpToEight) {
  const HttpOptions o;
  EXPECT_EQ(backoff_for(o, 0, ""), milliseconds(500));
  EXPECT_EQ(backoff_for(o, 1, ""), milliseconds(1000));
  EXPECT_EQ(backoff_for(o, 2, ""), milliseconds(2000));
  EXPECT_EQ(backoff_for(o, 3, ""), milliseconds(4000));
  EXPECT_EQ(backoff_for(o, 4, ""), milliseconds(8000));
  EXPECT_EQ(backoff_for(o, 5, ""), milliseconds(8000));
  EXPECT_EQ(backoff_for(o, 1000, ""), milliseconds(8000));  // no overflow on a huge attempt
}

TEST(RequestRules, RetryAfterSecondsAreHonouredUpToTheCap) {
  const HttpOptions o;
  EXPECT_EQ(backoff_for(o, 0, "7"), seconds(7));
  EXPECT_EQ(backoff_for(o, 3, "0"), milliseconds(0));
  EXPECT_EQ(backoff_for(o, 0, "60"), seconds(60));
  EXPECT_EQ(backoff_for(o, 0, "3600"), seconds(60));
  // Not delay-seconds and not a date: the ordinary backoff.
  EXPECT_EQ(backoff_for(o, 2, "soon"), milliseconds(2000));
}

TEST(RequestRules, RetryAfterHttpDateIsTheTimeLeftUntilThen) {
  const HttpOptions o;
  const milliseconds wait = backoff_for(o, 0, http_date(seconds(30)));
  EXPECT_LE(wait, seconds(30));
  EXPECT_GE(wait, seconds(28));  // the clock moved on, a second or so at most
  EXPECT_EQ(backoff_for(o, 0, http_date(seconds(-600))), milliseconds(0));  // already past: at once
  EXPECT_EQ(backoff_for(o, 0, http_date(seconds(3600))), seconds(60));     // capped like seconds
}

TEST(RequestRules, TokenGoesOnlyToTheAuthOrigin) {
  const HttpOptions o = hub_options("hf_rulesTestToken_41c9");
  const auto on_hub = request_headers(o, "https://huggingface.co/api/models/x/y", {"Range: bytes=5-"});
  EXPECT_EQ(on_hub, (std::vector<std::string>{"Range: bytes=5-", "Authorization: Bearer hf_rulesTestToken_41c9"}));
  EXPECT_EQ(request_headers(o, "https://HuggingFace.co:443/x").size(), 1u);  // same origin, spelled otherwise

  for (const char* elsewhere : {"https://cdn-lfs.huggingface.co/x", "http://huggingface.co/x", "https://huggingface.co:8443/x",
                                "https://huggingface.co.evil.example/x", "https://evil.example/?u=https://huggingface.co/"})
    EXPECT_EQ(request_headers(o, elsewhere, {"Range: bytes=5-"}), (std::vector<std::string>{"Range: bytes=5-"})) << elsewhere;

  EXPECT_TRUE(request_headers(hub_options(""), "https://huggingface.co/x").empty());  // no token: nothing to send
  HttpOptions no_origin = hub_options("hf_rulesTestToken_41c9");
  no_origin.auth_origin.reset();
  EXPECT_TRUE(request_headers(no_origin, "https://huggingface.co/x").empty());
}

TEST(RequestRules, PackageIndexesGetBasicCredentials) {
  // RFC 7617 section 2's example.
  HttpOptions o;
  o.auth_origin = "https://pypi.example:443";
  o.username = "Aladdin";
  o.token = Secret("open sesame");
  EXPECT_EQ(basic_credential(o), "QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  EXPECT_EQ(request_headers(o, "https://pypi.example/legacy/"),
            (std::vector<std::string>{"Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="}));
  EXPECT_TRUE(request_headers(o, "https://files.example/legacy/").empty());
}
