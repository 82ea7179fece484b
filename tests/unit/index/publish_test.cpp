// publish() against a scripted index (FakeTransport): the form twine sends,
// Basic auth for the index only, how the index's answers map to results,
// and retries of uploads.
#include "kwheel/index/publish.hpp"

#include <gtest/gtest.h>

#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

using namespace kwheel;
using kwheel::testing::dropped;
using kwheel::testing::FakeAnswer;
using kwheel::testing::FakeTransport;
using kwheel::testing::sent_header;

namespace {

const std::string kIndex = "https://index.test/legacy/";
const std::string kPassword = "p4ss";

class PublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wheel_ = dir_.path() / "demo-1.0-py3-none-any.whl";
    kwheel::testing::write_test_wheel(wheel_,
                                      {{"demo/__init__.py", "x = 1\n"},
                                       {"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: A demo\n"},
                                       {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}},
                                      "demo-1.0.dist-info/RECORD");
    repo_.url = kIndex;
    repo_.username = "u";
    repo_.password = Secret(kPassword);
    repo_.described = "--repository-url " + kIndex;
    options_.transport = index_;
  }

  UploadResult publish_one(std::vector<FakeAnswer> answers) {
    index_->on(kIndex, std::move(answers));
    std::vector<UploadResult> results = publish({wheel_}, repo_, options_);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }

  TempDir dir_{"publish-test"};
  std::filesystem::path wheel_;
  Repository repo_;
  PublishOptions options_;
  std::shared_ptr<FakeTransport> index_ = std::make_shared<FakeTransport>();
};

}  // namespace

TEST_F(PublishTest, UploadIsTwinesFormWithBasicAuth) {
  UploadResult r = publish_one({{200, "", {}, "OK"}});
  EXPECT_EQ(r.status, UploadResult::Status::uploaded);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(r.attempts, 1u);
  ASSERT_EQ(index_->sent.size(), 1u);
  const HttpRequest& sent = index_->sent[0];
  EXPECT_TRUE(sent.post);
  EXPECT_EQ(sent_header(sent, "Authorization"), "Basic dTpwNHNz");  // base64("u:p4ss")
  EXPECT_EQ(sent_header(sent, "Expect"), "");                        // no 100-continue
  std::vector<std::pair<std::string, std::string>> fields;
  for (const auto& p : sent.form)
    if (p.file.empty()) fields.emplace_back(p.name, p.value);
  Hasher h;
  h.update(kwheel::testing::slurp(wheel_));
  const std::vector<std::pair<std::string, std::string>> want{
      {"metadata_version", "2.1"}, {"name", "demo"},         {"version", "1.0"},
      {"summary", "A demo"},       {"pyversion", "py3"},     {"filetype", "bdist_wheel"},
      {"sha256_digest", to_hex(h.finish())}, {":action", "file_upload"}, {"protocol_version", "1"}};
  EXPECT_EQ(fields, want);
  const FormPart& file = sent.form.back();
  EXPECT_EQ(file.name, "content");
  EXPECT_EQ(file.file, wheel_);
  EXPECT_EQ(file.filename, "demo-1.0-py3-none-any.whl");
}

TEST_F(PublishTest, ExistingFileIsSkippedOnlyWhenAsked) {
  UploadResult r = publish_one({{409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::input));
  EXPECT_EQ(r.message.rfind("demo-1.0-py3-none-any.whl is already on " + kIndex + " (HTTP 409 Conflict: Conflict);", 0), 0u) << r.message;

  options_.skip_existing = true;
  r = publish_one({{400, "File already exists.", {}, "Bad Request"}});  // PyPI's way of saying it
  EXPECT_EQ(r.status, UploadResult::Status::exists);
  EXPECT_EQ(r.message, "already on the index, skipped");
}

TEST_F(PublishTest, ExistingAfterADroppedAttemptSaysItMayBeOurs) {
  options_.skip_existing = true;
  UploadResult r = publish_one({dropped(), {409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::exists);
  EXPECT_EQ(r.attempts, 2u);
  EXPECT_EQ(r.message, "already on the index, skipped (an earlier, interrupted attempt of this run may have stored it)");
}

TEST_F(PublishTest, IdenticalBytesOnDevpiAreNotANewUpload) {
  UploadResult r = publish_one({{200, "", {}, "Upload of identical file to non volatile index."}});
  EXPECT_EQ(r.status, UploadResult::Status::exists);
}

TEST_F(PublishTest, RefusedCredentialsAreAnAuthFailureWithoutThePassword) {
  UploadResult r = publish_one({{403, "<html><h1>bad password p4ss for u</h1></html>", {}, "Forbidden"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::auth));
  EXPECT_EQ(r.message, kIndex + " refused the credentials of user 'u' (HTTP 403 Forbidden: bad password *** for u); check the password or token for --repository-url " + kIndex);
  EXPECT_EQ(index_->sent.size(), 1u);  // not retried

  repo_.username.clear();
  repo_.password = Secret();
  r = publish_one({{401, "", {}, "Unauthorized"}});
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::auth));
  EXPECT_NE(r.message.find("wants credentials (HTTP 401 Unauthorized)"), std::string::npos) << r.message;
  EXPECT_EQ(sent_header(index_->sent.back(), "Authorization"), std::nullopt);
}

TEST_F(PublishTest, RedirectIsNotFollowedSoThePasswordStaysWithTheIndex) {
  UploadResult r = publish_one({{307, "", {{"location", "https://elsewhere.test/up/"}}, "Temporary Redirect"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::usage));
  EXPECT_NE(r.message.find("answered HTTP 307 Temporary Redirect to https://elsewhere.test/up/; uploads are not redirected"), std::string::npos)
      << r.message;
  ASSERT_EQ(index_->sent.size(), 1u);
  EXPECT_EQ(index_->sent[0].url, kIndex);
}

TEST_F(PublishTest, PasswordGoesOnlyToTheIndexOrigin) {
  // An upload URL on another origin than the one the credentials are for
  // (as HttpOptions::auth_origin holds them) gets none.
  HttpOptions o;
  o.auth_origin = url_origin(kIndex);
  o.username = "u";
  o.token = Secret(kPassword);
  o.max_attempts = 1;
  HttpClient client(o, index_);
  client.post_multipart("https://other.test/legacy/", {{"name", "demo", {}, {}, {}}});
  client.post_multipart("https://index.test:443/legacy/", {{"name", "demo", {}, {}, {}}});
  ASSERT_EQ(index_->sent.size(), 2u);
  EXPECT_EQ(sent_header(index_->sent[0], "Authorization"), std::nullopt);
  EXPECT_EQ(sent_header(index_->sent[1], "Authorization"), "Basic dTpwNHNz");
}

TEST_F(PublishTest, ServerErrorsAreRetriedThenGivenUp) {
  options_.max_attempts = 3;
  UploadResult r = publish_one({{503, "", {}, "Service Unavailable"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::network));
  EXPECT_EQ(r.attempts, 3u);
  EXPECT_EQ(r.message, "giving up on " + kIndex + " after 3 attempts: HTTP 503 Service Unavailable; check the index and try again later");
  EXPECT_EQ(index_->slept.size(), 2u);
}

TEST_F(PublishTest, MissingEndpointIsNotFound) {
  UploadResult r = publish_one({{404, "", {}, "Not Found"}});
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::not_found));
  EXPECT_EQ(r.message.rfind("no upload endpoint at " + kIndex + " (HTTP 404 Not Found: Not Found);", 0), 0u) << r.message;
}
