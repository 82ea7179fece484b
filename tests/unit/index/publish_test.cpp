// publish() against a scripted index (FakeTransport): the form twine sends,
// Basic auth for the index only, how the index's answers map to results,
// retries of uploads, and --skip-existing comparing the bytes through the
// index's simple page.
#include "kwheel/index/publish.hpp"

#include <gtest/gtest.h>

#include <functional>

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

  // The index's PEP 503 page for demo, listing the wheel with `fragment`
  // ("#sha256=<hex>", or "" for none) after its href.
  void serve_page(const std::string& url, const std::string& fragment) {
    index_->on(url, {{200, "<!DOCTYPE html><html><body><a href=\"/packages/demo-1.0-py3-none-any.whl" + fragment + "\">demo-1.0-py3-none-any.whl</a></body></html>",
                      {{"content-type", "text/html"}}, "OK"}});
  }
  // sha256 of the wheel, from coreutils.
  std::string wheel_sha256() const { return kwheel::testing::sha256sum(wheel_); }

  UploadResult publish_one(std::vector<FakeAnswer> answers) {
    index_->on(kIndex, std::move(answers));
    std::vector<UploadResult> results = publish({wheel_}, repo_, options_);
    EXPECT_EQ(results.size(), 1u);
    return results.at(0);
  }

  // The one Error publish() gives when the index refuses uploads as such.
  Error refused(std::vector<FakeAnswer> answers) {
    index_->on(kIndex, std::move(answers));
    try {
      publish({wheel_}, repo_, options_);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "publish() did not throw";
    return Error(ErrorKind::input, "");
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
  EXPECT_EQ(r.message.rfind("demo-1.0-py3-none-any.whl is already on " + kIndex + " (HTTP 409 Conflict);", 0), 0u) << r.message;

  options_.skip_existing = true;
  options_.index_url = "https://index.test/simple/";
  serve_page("https://index.test/simple/demo/", "#sha256=" + wheel_sha256());
  r = publish_one({{400, "File already exists.", {}, "Bad Request"}});  // PyPI's way of saying it
  EXPECT_EQ(r.status, UploadResult::Status::exists);
  EXPECT_EQ(r.message, "already on the index with the same bytes (sha256 compared on https://index.test/simple/demo/), skipped");
}

TEST_F(PublishTest, ExistingAfterADroppedAttemptSaysItMayBeOurs) {
  options_.skip_existing = true;
  options_.index_url = "https://index.test/simple";
  serve_page("https://index.test/simple/demo/", "#sha256=" + wheel_sha256());
  UploadResult r = publish_one({dropped(), {409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::exists);
  EXPECT_EQ(r.attempts, 2u);
  EXPECT_EQ(r.message,
            "already on the index with the same bytes (sha256 compared on https://index.test/simple/demo/), skipped (an earlier, interrupted attempt of this "
            "run may have stored it)");
}

TEST_F(PublishTest, SkipExistingFailsOnOtherBytesNamingBothHashes) {
  options_.skip_existing = true;
  options_.index_url = "https://index.test/simple/";
  const std::string theirs(64, 'c');
  serve_page("https://index.test/simple/demo/", "#sha256=" + theirs);
  UploadResult r = publish_one({{409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::input));
  EXPECT_EQ(r.message, "demo-1.0-py3-none-any.whl is already on " + kIndex + " with other bytes: this file's sha256 is " + wheel_sha256() +
                           ", the index's is " + theirs + " (https://index.test/simple/demo/); an index keeps published files unchanged: publish a new version");
}

TEST_F(PublishTest, SkipExistingFailsClosedWhenTheIndexDoesNotSayWhichBytesItHas) {
  options_.skip_existing = true;
  options_.index_url = "https://index.test/simple/";
  struct Case {
    const char* what;
    std::function<void()> serve;
    ErrorKind kind;
    std::string says;
  };
  const std::vector<Case> cases{
      {"no sha256 fragment", [&] { serve_page("https://index.test/simple/demo/", ""); }, ErrorKind::input,
       "https://index.test/simple/demo/ lists demo-1.0-py3-none-any.whl with no sha256"},
      {"another hash only", [&] { serve_page("https://index.test/simple/demo/", "#md5=0123456789abcdef0123456789abcdef"); }, ErrorKind::input,
       "https://index.test/simple/demo/ lists demo-1.0-py3-none-any.whl with no sha256"},
      {"not listed",
       [&] { index_->on("https://index.test/simple/demo/", {{200, "<html><body><a href=\"/p/demo-0.9-py3-none-any.whl#sha256=" + std::string(64, 'd') + "\">x</a></body></html>", {{"content-type", "text/html"}}, "OK"}}); },
       ErrorKind::not_found, "https://index.test/simple/demo/ does not list demo-1.0-py3-none-any.whl"},
      {"no page", [&] { index_->on("https://index.test/simple/demo/", {{404, "", {}, "Not Found"}}); }, ErrorKind::not_found,
       "no project page at https://index.test/simple/demo/ (HTTP 404)"},
  };
  for (const auto& c : cases) {
    c.serve();
    UploadResult r = publish_one({{409, "", {}, "Conflict"}});
    EXPECT_EQ(r.status, UploadResult::Status::failed) << c.what;
    EXPECT_EQ(r.exit_code, static_cast<int>(c.kind)) << c.what;
    EXPECT_NE(r.message.find("kwheel cannot compare the bytes: " + c.says), std::string::npos) << c.what << ": " << r.message;
    EXPECT_NE(r.message.find("pass --index-url URL"), std::string::npos) << c.what << ": " << r.message;
  }
}

TEST_F(PublishTest, SkipExistingWithoutAKnownSimpleIndexFailsClosedAskingForIt) {
  // An upload URL of no server kwheel knows (/legacy/ is neither
  // pypiserver's root nor devpi's /USER/INDEX/): nothing to compare with.
  options_.skip_existing = true;
  UploadResult r = publish_one({{409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::failed);
  EXPECT_EQ(r.exit_code, static_cast<int>(ErrorKind::usage));
  EXPECT_NE(r.message.find("does not know where this index's simple pages are"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("pass --index-url URL"), std::string::npos) << r.message;
  EXPECT_EQ(index_->sent.size(), 1u);  // the upload, and no guess
}

TEST_F(PublishTest, SkipExistingOnDevpiReadsItsJsonPageWithTheUploadCredentials) {
  const std::string devpi = "https://index.test/alice/dev/";
  repo_.url = devpi;
  options_.skip_existing = true;
  index_->on(devpi, {{409, "", {}, "Conflict"}});
  const nlohmann::json page{{"meta", {{"api-version", "1.0"}}},
                            {"name", "demo"},
                            {"files", {{{"filename", "demo-1.0-py3-none-any.whl"}, {"url", "../../+f/abc/demo-1.0-py3-none-any.whl"}, {"hashes", {{"sha256", wheel_sha256()}}}}}}};
  index_->on(devpi + "+simple/demo/", {{200, page.dump(), {{"content-type", "application/vnd.pypi.simple.v1+json"}}, "OK"}});
  std::vector<UploadResult> results = publish({wheel_}, repo_, options_);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status, UploadResult::Status::exists) << results[0].message;
  const auto got = index_->sent_to(devpi + "+simple/demo/");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(sent_header(got[0], "Authorization"), "Basic dTpwNHNz");
  EXPECT_NE(sent_header(got[0], "Accept").value_or("").find("application/vnd.pypi.simple.v1+json"), std::string::npos);
}

TEST_F(PublishTest, SimpleIndexOnAnotherOriginGetsNoCredentials) {
  options_.skip_existing = true;
  options_.index_url = "https://pages.test/simple/";
  serve_page("https://pages.test/simple/demo/", "#sha256=" + wheel_sha256());
  UploadResult r = publish_one({{409, "", {}, "Conflict"}});
  EXPECT_EQ(r.status, UploadResult::Status::exists) << r.message;
  const auto got = index_->sent_to("https://pages.test/simple/demo/");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(sent_header(got[0], "Authorization"), std::nullopt);
}

TEST_F(PublishTest, IndexUrlWithCredentialsIsRefusedBeforeAnyUpload) {
  options_.skip_existing = true;
  options_.index_url = "https://eve:" + kPassword + "-other@index.test/simple/";
  index_->on(kIndex, {{200, "", {}, "OK"}});
  try {
    publish({wheel_}, repo_, options_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()).find("-other"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(index_->sent.empty());
}

TEST_F(PublishTest, IdenticalBytesOnDevpiAreNotANewUpload) {
  UploadResult r = publish_one({{200, "", {}, "Upload of identical file to non volatile index."}});
  EXPECT_EQ(r.status, UploadResult::Status::exists);
}

TEST_F(PublishTest, RefusedCredentialsAreAnAuthFailureWithoutThePassword) {
  Error e = refused({{403, "<html><h1>bad password p4ss for u</h1></html>", {}, "Forbidden"}});
  EXPECT_EQ(e.kind(), ErrorKind::auth);
  EXPECT_EQ(std::string(e.what()), kIndex + " refused the credentials of user 'u' (HTTP 403 Forbidden: bad password *** for u); check the password or token for --repository-url " + kIndex);
  EXPECT_EQ(index_->sent.size(), 1u);  // not retried

  repo_.username.clear();
  repo_.password = Secret();
  e = refused({{401, "", {}, "Unauthorized"}});
  EXPECT_EQ(e.kind(), ErrorKind::auth);
  EXPECT_NE(std::string(e.what()).find("wants credentials (HTTP 401 Unauthorized)"), std::string::npos) << e.what();
  EXPECT_EQ(sent_header(index_->sent.back(), "Authorization"), std::nullopt);
}

TEST_F(PublishTest, RefusedCredentialsAreOneErrorAndNoOtherFileIsSent) {
  index_->on(kIndex, {{403, "", {}, "Forbidden"}, {200, "", {}, "OK"}});
  options_.jobs = 4;
  std::vector<std::string> reported;
  try {
    publish({wheel_, wheel_, wheel_}, repo_, options_, [&](const UploadResult& r) { reported.push_back(r.message); });
    ADD_FAILURE() << "publish() did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::auth);
    EXPECT_NE(std::string(e.what()).find("(HTTP 403 Forbidden); check the password"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("; none of the 3 files was uploaded"), std::string::npos) << e.what();
  }
  EXPECT_EQ(index_->sent.size(), 1u);
  EXPECT_TRUE(reported.empty());
}

TEST_F(PublishTest, AStatusPageSaysNothingBeyondTheStatus) {
  // pypiserver's 403 for a wrong password: bottle's page with <pre>None</pre>.
  const std::string page = "<html><head><title>Error: 403 Forbidden</title></head><body><h1>Error: 403 Forbidden</h1>"
                           "<p>Sorry, the requested URL <tt>&#039;http://x/&#039;</tt> caused an error:</p><pre>None</pre></body></html>";
  Error e = refused({{403, page, {}, "Forbidden"}});
  EXPECT_EQ(std::string(e.what()), kIndex + " refused the credentials of user 'u' (HTTP 403 Forbidden); check the password or token for --repository-url " + kIndex);
}

TEST_F(PublishTest, RedirectIsNotFollowedSoThePasswordStaysWithTheIndex) {
  Error e = refused({{307, "", {{"location", "https://elsewhere.test/up/"}}, "Temporary Redirect"}});
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("answered HTTP 307 Temporary Redirect to https://elsewhere.test/up/; uploads are not redirected"), std::string::npos)
      << e.what();
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
  Error e = refused({{404, "", {}, "Not Found"}});
  EXPECT_EQ(e.kind(), ErrorKind::not_found);
  EXPECT_EQ(std::string(e.what()).rfind("no upload endpoint at " + kIndex + " (HTTP 404 Not Found);", 0), 0u) << e.what();
}

TEST_F(PublishTest, NotImplementedIsAskedOnceAndIsNotFound) {
  options_.max_attempts = 5;
  Error e = refused({{501, "", {}, "Not Implemented"}});
  EXPECT_EQ(e.kind(), ErrorKind::not_found);
  EXPECT_EQ(std::string(e.what()).rfind("no upload endpoint at " + kIndex + " (HTTP 501 Not Implemented);", 0), 0u) << e.what();
  EXPECT_EQ(index_->sent.size(), 1u);
  EXPECT_TRUE(index_->slept.empty());
}
