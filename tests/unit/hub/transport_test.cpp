// The transport seam's own parts: header lines as RFC 9110 reads them
// (names case-insensitive, optional whitespace around the value, each
// response of a redirect chain or interim 1xx starting afresh), and the
// default ExchangeSet, which runs exchanges one after another through
// perform(). libcurl's transport (curl_transport) needs a server: the
// integration tests drive it (test_hostile_network.py, test_reliability.py).
#include "kwheel/hub/transport.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "fake_transport.hpp"

using namespace kwheel;

namespace {

class Collect : public ResponseSink {
 public:
  bool body(const ResponseHead&, std::string_view bytes) override {
    got.append(bytes);
    return true;
  }
  std::string got;
};

}  // namespace

TEST(ResponseHead, HeaderNamesAreCaseInsensitiveAndValuesTrimmed) {
  ResponseHead h;
  h.add_line("HTTP/1.1 409 Conflict");
  h.add_line("Content-Type: application/json");
  h.add_line("X-Error-Code:\tRepoNotFound  ");
  h.add_line("Location:https://cdn.test/a?b=c:d");
  EXPECT_EQ(h.reason, "Conflict");
  EXPECT_EQ(h.header("content-type"), "application/json");
  EXPECT_EQ(h.header("x-error-code"), "RepoNotFound");
  EXPECT_EQ(h.header("location"), "https://cdn.test/a?b=c:d");  // split at the first colon only
  EXPECT_EQ(h.header("retry-after"), "");
}

TEST(ResponseHead, LastValueWinsAndLinesWithoutAColonAreIgnored) {
  ResponseHead h;
  h.add_line("HTTP/2 200");
  h.add_line("Retry-After: 5");
  h.add_line("retry-after: 7");
  h.add_line("not a header");
  EXPECT_EQ(h.header("retry-after"), "7");
  EXPECT_EQ(h.headers.size(), 1u);
  EXPECT_EQ(h.reason, "");  // HTTP/2 has no reason phrase
}

TEST(ResponseHead, EachStatusLineStartsAfresh) {
  // A redirect's Location must not look like the final answer's.
  ResponseHead h;
  h.add_line("HTTP/1.1 302 Found");
  h.add_line("Location: https://cdn.test/a");
  h.add_line("HTTP/1.1 100 Continue");
  h.add_line("HTTP/1.1 200 OK");
  h.add_line("Content-Length: 5");
  EXPECT_EQ(h.reason, "OK");
  EXPECT_EQ(h.header("location"), "");
  EXPECT_EQ(h.header("content-length"), "5");
}

TEST(Transport, DefaultExchangeSetRunsEachThroughPerform) {
  kwheel::testing::FakeTransport transport;
  transport.on("https://a.test/1", {kwheel::testing::ok("one")});
  transport.on("https://a.test/2", {kwheel::testing::ok("two")});
  auto set = transport.concurrent(4);
  Collect first, second;
  HttpRequest r1, r2;
  r1.url = "https://a.test/1";
  r2.url = "https://a.test/2";
  ASSERT_TRUE(set->add(r1, first));
  ASSERT_TRUE(set->add(r2, second));
  EXPECT_TRUE(transport.sent.empty());  // nothing runs before run()

  const auto done = set->run();
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].first, &first);
  EXPECT_EQ(done[1].first, &second);
  EXPECT_TRUE(done[0].second.ok());
  EXPECT_EQ(done[0].second.head.status, 200);
  EXPECT_EQ(first.got, "one");
  EXPECT_EQ(second.got, "two");
  EXPECT_EQ(transport.sent.size(), 2u);
  EXPECT_TRUE(set->run().empty());  // each exchange runs once
}
