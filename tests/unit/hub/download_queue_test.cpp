// The download queue against a scripted server (FakeTransport): files land
// verified in place, retryable failures are tried again after a backoff, a
// file that never verifies is an error naming it, and the token stays on
// its origin across a redirect to a CDN.
#include "kwheel/hub/download_queue.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::FakeAnswer;
using kwheel::testing::FakeTransport;
using kwheel::testing::ok;
using kwheel::testing::sent_header;
using std::chrono::milliseconds;

namespace {

// sha256 of the bytes, from sha256sum(1).
const std::string kHelloSha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824";
const std::string kWorldSha256 = "486ea46224d1bb4fb680f34f7c9ad96a8f24ec88be73ea8e5a6c65260e9cb8a7";
const std::string kServer = "https://hub.test";
const std::string kToken = "hf_queueTestToken_5d2a";

class DownloadQueueTest : public ::testing::Test {
 protected:
  DownloadQueueTest() {
    options_.auth_origin = "https://hub.test:443";
    options_.token = Secret(kToken);
  }

  DownloadJob job(const std::string& name, uint64_t size, const std::string& sha256) {
    DownloadJob j;
    j.url = kServer + "/files/" + name;
    j.partial = dir_.path() / (name + ".incomplete");
    j.dest = dir_.path() / name;
    j.size = size;
    j.sha256 = sha256;
    j.label = "'" + name + "'";
    return j;
  }

  void run(std::vector<DownloadJob> jobs, unsigned parallel) {
    DownloadQueue queue(options_, transport_, stats_, progress_);
    queue.run(std::move(jobs), parallel);
  }

  HttpOptions options_;
  FakeTransport transport_;
  TransferStats stats_;
  std::vector<std::string> done_;
  DownloadProgress progress_{{}, [this](const DownloadJob& j) { done_.push_back(j.label); }};
  TempDir dir_{"download-queue-test"};
};

FakeAnswer status(long code, std::map<std::string, std::string> headers = {}) {
  return FakeAnswer{code, "", std::move(headers), "", Exchange::Failure::none};
}

}  // namespace

TEST_F(DownloadQueueTest, ParallelDownloadsAllLandVerified) {
  transport_.on(kServer + "/files/a", {ok("hello")});
  transport_.on(kServer + "/files/b", {ok("world")});
  transport_.on(kServer + "/files/c", {ok("hello")});
  run({job("a", 5, kHelloSha256), job("b", 5, kWorldSha256), job("c", 5, kHelloSha256)}, 2);

  EXPECT_EQ(kwheel::testing::slurp(dir_.path() / "a"), "hello");
  EXPECT_EQ(kwheel::testing::slurp(dir_.path() / "b"), "world");
  EXPECT_EQ(kwheel::testing::slurp(dir_.path() / "c"), "hello");
  for (const char* partial : {"a.incomplete", "b.incomplete", "c.incomplete"})
    EXPECT_FALSE(std::filesystem::exists(dir_.path() / partial)) << partial;
  EXPECT_EQ(done_.size(), 3u);
  EXPECT_EQ(stats_.requests, 3u);
  EXPECT_EQ(stats_.retries, 0u);
  EXPECT_EQ(stats_.bytes, 15u);
}

TEST_F(DownloadQueueTest, RetryableFailuresAreTriedAgainAfterTheBackoff) {
  const std::string url = kServer + "/files/a";
  transport_.on(url, {status(503, {{"retry-after", "3"}}), kwheel::testing::dropped(), ok("hello")});
  run({job("a", 5, kHelloSha256)}, 1);

  EXPECT_EQ(kwheel::testing::slurp(dir_.path() / "a"), "hello");
  EXPECT_EQ(transport_.sent_to(url).size(), 3u);
  EXPECT_EQ(stats_.retries, 2u);
  // The server's Retry-After first, then the ordinary second backoff (1 s):
  // what is left of each once the queue runs dry.
  ASSERT_EQ(transport_.slept.size(), 2u);
  EXPECT_LE(transport_.slept[0], milliseconds(3000));
  EXPECT_GT(transport_.slept[0], milliseconds(2000));
  EXPECT_LE(transport_.slept[1], milliseconds(1000));
  EXPECT_GT(transport_.slept[1], milliseconds(500));
}

TEST_F(DownloadQueueTest, DigestMismatchFailsNamingTheFile) {
  options_.max_attempts = 2;
  const std::string url = kServer + "/files/a";
  transport_.on(url, {ok("jello")});  // the listed size, other bytes
  const std::string msg = kwheel::testing::error_of([&] { run({job("a", 5, kHelloSha256)}, 1); }, ErrorKind::network);

  EXPECT_NE(msg.find("downloading 'a': gave up after 2 attempts"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sha256 mismatch (expected " + kHelloSha256), std::string::npos) << msg;
  EXPECT_EQ(transport_.sent_to(url).size(), 2u);  // fetched again before giving up
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "a"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "a.incomplete"));  // corrupt bytes are not resumed from
  EXPECT_TRUE(done_.empty());
}

TEST_F(DownloadQueueTest, MissingFileIsNotRetried) {
  const std::string url = kServer + "/files/a";
  transport_.on(url, {status(404)});
  const std::string msg = kwheel::testing::error_of([&] { run({job("a", 5, kHelloSha256)}, 1); }, ErrorKind::not_found);
  EXPECT_NE(msg.find("downloading 'a': HTTP 404"), std::string::npos) << msg;
  EXPECT_EQ(transport_.sent_to(url).size(), 1u);
}

TEST_F(DownloadQueueTest, RedirectToACdnLeavesTheTokenBehind) {
  const std::string url = kServer + "/files/a";
  const std::string cdn = "https://cdn.test/blob/a?sig=1";
  transport_.on(url, {status(302, {{"location", cdn}})});
  transport_.on(cdn, {ok("hello")});
  run({job("a", 5, kHelloSha256)}, 1);

  EXPECT_EQ(kwheel::testing::slurp(dir_.path() / "a"), "hello");
  ASSERT_EQ(transport_.sent_to(url).size(), 1u);
  EXPECT_EQ(sent_header(transport_.sent_to(url)[0], "Authorization"), "Bearer " + kToken);
  ASSERT_EQ(transport_.sent_to(cdn).size(), 1u);
  EXPECT_EQ(sent_header(transport_.sent_to(cdn)[0], "Authorization"), std::nullopt);
}
