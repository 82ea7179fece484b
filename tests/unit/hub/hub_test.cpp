// HubClient against a scripted Hub (FakeTransport): how it resolves
// revisions, falls back to model repos, pages through tree listings,
// downloads into the cache, retries, and maps the Hub's errors.
#include "kwheel/hub/hub.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
using kwheel::testing::dropped;
using kwheel::testing::FakeAnswer;
using kwheel::testing::FakeTransport;
using kwheel::testing::ok;
using kwheel::testing::sent_header;

namespace {

const std::string kHub = "https://hub.test";
const std::string kToken = "hf_unitTestToken_7c1e0b";
const std::string kApi = kHub + "/api/kernels/org/k";
const std::string kModelApi = kHub + "/api/models/org/k";
const std::string kC1 = std::string(40, '1');
const std::string kC2 = std::string(40, '2');
const std::string kC3 = std::string(40, '3');

const std::string kRefs = R"({"branches": [{"name": "main", "targetCommit": ")" + kC3 + R"("},
                                            {"name": "v1", "targetCommit": ")" + kC1 + R"("},
                                            {"name": "v2", "targetCommit": ")" + kC2 + R"("}],
                              "tags": [{"name": "v0.1.0", "targetCommit": ")" + kC2 + R"("}]})";

FakeAnswer hub_error(long status, const std::string& code, const std::string& message = "") {
  FakeAnswer a;
  a.status = status;
  if (!code.empty()) a.headers["x-error-code"] = code;
  if (!message.empty()) a.headers["x-error-message"] = message;
  return a;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class HubClientTest : public ::testing::Test {
 protected:
  HubConfig config(bool forced = false) {
    HubConfig c;
    c.endpoint = kHub;
    c.token = Secret(kToken);
    c.token_source = "--token";
    c.cache_dir = cache_.path();
    c.repo_type_forced = forced;
    return c;
  }
  HubClient client(bool forced = false) { return HubClient(config(forced), "org/k", 2, hub_); }

  TempDir cache_{"hub-test"};
  std::shared_ptr<FakeTransport> hub_ = std::make_shared<FakeTransport>();
};

}  // namespace

TEST_F(HubClientTest, NoRevisionResolvesTheHighestVersionBranch) {
  hub_->on(kApi + "/refs", {ok(kRefs)});
  HubClient hub = client();
  Resolution r = hub.resolve(std::nullopt, std::nullopt);
  EXPECT_EQ(r.ref, "v2");
  EXPECT_EQ(r.commit, kC2);
  EXPECT_EQ(r.kernel_version, 2u);
  EXPECT_TRUE(r.latest);
  EXPECT_EQ(r.version, "0.1.0");  // the vX.Y.Z tag at that commit
  ASSERT_EQ(hub_->sent.size(), 1u);
  EXPECT_EQ(sent_header(hub_->sent[0], "Authorization"), "Bearer " + kToken);
  // Recorded for --offline, as huggingface_hub records the refs it resolved.
  EXPECT_EQ(read(cache_.path() / "kernels--org--k" / "refs" / "v2"), kC2);
}

TEST_F(HubClientTest, VersionSpecPicksTheHighestMatchingTag) {
  hub_->on(kApi + "/refs", {ok(R"({"branches": [], "tags": [{"name": "v0.1.0", "targetCommit": ")" + kC1 + R"("},
                                                            {"name": "v0.2.5", "targetCommit": ")" + kC2 + R"("},
                                                            {"name": "v0.3.0", "targetCommit": ")" + kC3 + R"("}]})")});
  HubClient hub = client();
  Resolution r = hub.resolve(std::nullopt, std::string(">=0.2,<0.3"));
  EXPECT_EQ(r.ref, "v0.2.5");
  EXPECT_EQ(r.commit, kC2);
  EXPECT_EQ(r.version, "0.2.5");
}

TEST_F(HubClientTest, RevisionIsLookedUpAndItsShaUsed) {
  hub_->on(kApi + "/refs", {ok(kRefs)});
  hub_->on(kApi + "/revision/main", {ok(R"({"sha": ")" + kC3 + R"("})")});
  HubClient hub = client();
  Resolution r = hub.resolve(std::string("main"), std::nullopt);
  EXPECT_EQ(r.ref, "main");
  EXPECT_EQ(r.commit, kC3);
  EXPECT_EQ(r.kernel_version, std::nullopt);
}

TEST_F(HubClientTest, UnknownRevisionListsTheRefs) {
  hub_->on(kApi + "/refs", {ok(kRefs)});
  hub_->on(kApi + "/revision/nope", {hub_error(404, "RevisionNotFound")});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.resolve(std::string("nope"), std::nullopt); }, ErrorKind::not_found);
  EXPECT_EQ(msg, "revision 'nope' not found in 'org/k' (branches and tags: main, v1, v2, v0.1.0)");
}

TEST_F(HubClientTest, KernelRepoNotFoundFallsBackToAModelRepo) {
  hub_->on(kApi + "/refs", {hub_error(404, "RepoNotFound")});
  hub_->on(kModelApi + "/refs", {ok(kRefs)});
  HubClient hub = client();
  EXPECT_EQ(hub.repo_type_note(), "");
  std::vector<RefInfo> refs = hub.list_refs();
  ASSERT_EQ(refs.size(), 4u);
  EXPECT_EQ(refs[1].name, "v1");
  EXPECT_EQ(refs[1].commit, kC1);
  EXPECT_EQ(refs[3].kind, "tag");
  EXPECT_NE(hub.repo_type_note().find("org/k is a model repo, not a kernel repo"), std::string::npos) << hub.repo_type_note();
  EXPECT_EQ(hub.repo_url(), kHub + "/org/k");
  EXPECT_EQ(hub.cache().repo_dir(), cache_.path() / "models--org--k");
}

TEST_F(HubClientTest, ForcedRepoTypeDoesNotFallBack) {
  hub_->on(kApi + "/refs", {hub_error(404, "RepoNotFound")});
  hub_->on(kModelApi + "/refs", {ok(kRefs)});
  HubClient hub = client(/*forced=*/true);
  try {
    hub.list_refs();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::not_found);
    EXPECT_EQ(e.reason(), Reason::repo_not_found);
    EXPECT_EQ(std::string(e.what()), "repo 'org/k' at " + kHub + " was not found or is not accessible: check the name, and that the token (from --token) can read it");
  }
  EXPECT_TRUE(hub_->sent_to(kModelApi + "/refs").empty());
}

TEST_F(HubClientTest, HubErrorsMapToKinds) {
  struct Case {
    FakeAnswer answer;
    ErrorKind kind;
    std::string needle;
  };
  const std::vector<Case> cases{
      {hub_error(403, "GatedRepo"), ErrorKind::auth, "repo 'org/k' at https://hub.test is gated: request access on https://hub.test/kernels/org/k"},
      {hub_error(401, "", "Invalid credentials in Authorization header"), ErrorKind::auth, "the Hub at https://hub.test rejected the token (from --token)"},
      {hub_error(403, "", "no"), ErrorKind::auth, "access denied (HTTP 403: no)"},
      {FakeAnswer{418, R"({"error": "teapot"})", {}, ""}, ErrorKind::network, "listing refs of org/k: HTTP 418: teapot from https://hub.test/api/kernels/org/k/refs"},
  };
  for (const auto& c : cases) {
    hub_->on(kApi + "/refs", {c.answer});
    HubClient hub = client(/*forced=*/true);
    const std::string msg = kwheel::testing::error_of([&] { hub.list_refs(); }, c.kind);
    EXPECT_NE(msg.find(c.needle), std::string::npos) << msg;
  }
}

TEST_F(HubClientTest, DroppedConnectionsAreRetriedWithBackoff) {
  FakeAnswer busy = hub_error(503, "");
  busy.headers["retry-after"] = "7";
  hub_->on(kApi + "/refs", {dropped(), busy, ok(kRefs)});
  HubClient hub = client();
  EXPECT_EQ(hub.list_refs().size(), 4u);
  EXPECT_EQ(hub_->sent_to(kApi + "/refs").size(), 3u);
  EXPECT_EQ(hub.stats().retries, 2u);
  ASSERT_EQ(hub_->slept.size(), 2u);
  EXPECT_EQ(hub_->slept[1], std::chrono::seconds(7));  // the server's Retry-After
}

TEST_F(HubClientTest, GivesUpAfterTheAttempts) {
  hub_->on(kApi + "/refs", {hub_error(502, "")});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.list_refs(); }, ErrorKind::network);
  EXPECT_EQ(msg, "giving up on " + kApi + "/refs after 5 attempts: HTTP 502; check the endpoint and try again later");
  EXPECT_EQ(hub_->sent.size(), 5u);
  EXPECT_EQ(hub_->slept.size(), 4u);  // no wait after the last
}

TEST_F(HubClientTest, CutShortJsonIsAskedForAgain) {
  hub_->on(kApi + "/refs", {ok(R"({"branches": [)"), ok(kRefs)});
  HubClient hub = client();
  EXPECT_EQ(hub.list_refs().size(), 4u);
  EXPECT_EQ(hub_->sent.size(), 2u);
}

TEST_F(HubClientTest, RedirectsKeepTheTokenOnTheHub) {
  FakeAnswer moved{302, "", {{"location", "https://cdn.test/refs"}}, ""};
  hub_->on(kApi + "/refs", {moved});
  hub_->on("https://cdn.test/refs", {ok(kRefs)});
  HubClient hub = client();
  EXPECT_EQ(hub.list_refs().size(), 4u);
  ASSERT_EQ(hub_->sent.size(), 2u);
  EXPECT_EQ(sent_header(hub_->sent[0], "Authorization"), "Bearer " + kToken);
  EXPECT_EQ(sent_header(hub_->sent[1], "Authorization"), std::nullopt);
}

TEST_F(HubClientTest, TreeListingFollowsPagesOnTheHub) {
  const std::string first = kApi + "/tree/" + kC1 + "/build?recursive=true&expand=false";
  const std::string second = kApi + "/tree/" + kC1 + "/build?recursive=true&expand=false&cursor=2";
  FakeAnswer page1{200, R"([{"type": "directory", "path": "build/v"}])", {{"link", "<" + second + ">; rel=\"next\""}}, ""};
  hub_->on(first, {page1});
  hub_->on(second, {ok(R"([{"type": "file", "path": "build/v/a.py", "size": 6, "oid": ")" + std::string(40, 'a') + R"("}])")});
  HubClient hub = client();
  std::vector<TreeEntry> tree = hub.list_tree(kC1);
  ASSERT_EQ(tree.size(), 2u);
  EXPECT_EQ(tree[0].type, "directory");
  EXPECT_EQ(tree[1].path, "build/v/a.py");
  EXPECT_EQ(tree[1].size, 6u);
  EXPECT_EQ(tree[1].etag(), std::string(40, 'a'));
}

TEST_F(HubClientTest, TreePaginationToAnotherHostIsRefused) {
  const std::string first = kApi + "/tree/" + kC1 + "/build?recursive=true&expand=false";
  hub_->on(first, {{200, "[]", {{"link", "<https://elsewhere.test/page2>; rel=\"next\""}}, ""}});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.list_tree(kC1); }, ErrorKind::network);
  EXPECT_NE(msg.find("pagination points to another host (https://elsewhere.test/page2); refusing it"), std::string::npos) << msg;
}

TEST_F(HubClientTest, MissingBuildDirectoryIsNamed) {
  hub_->on(kApi + "/tree/" + kC1 + "/build?recursive=true&expand=false", {hub_error(404, "EntryNotFound")});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.list_tree(kC1); }, ErrorKind::not_found);
  EXPECT_EQ(msg, "'org/k' has no build/ directory at 111111111111; is it a kernel repo built with kernel-builder?");
}

namespace {

// "hello\n": its sha256, and its git blob id (sha1 of "blob 6\0hello\n").
const std::string kHelloSha256 = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
const std::string kHelloBlob = "ce013625030ba8dba906f756967f9e9ca394464a";

TreeEntry file_entry(const std::string& path, bool lfs) {
  TreeEntry e;
  e.path = path;
  e.type = "file";
  e.size = 6;
  e.oid = lfs ? std::string(40, 'f') : kHelloBlob;
  if (lfs) e.lfs_sha256 = kHelloSha256;
  return e;
}

}  // namespace

TEST_F(HubClientTest, FetchDownloadsVerifiedFilesIntoTheCache) {
  const std::string resolve = kHub + "/kernels/org/k/resolve/" + kC1 + "/";
  hub_->on(resolve + "build/v/plain.py", {ok("hello\n")});
  // The LFS file comes from a CDN: no token goes there.
  hub_->on(resolve + "build/v/big.so", {{302, "", {{"location", "https://cdn.test/blob"}}, ""}});
  hub_->on("https://cdn.test/blob", {ok("hello\n")});
  HubClient hub = client();
  std::vector<RepoFile> files = hub.fetch(kC1, {file_entry("build/v/plain.py", false), file_entry("build/v/big.so", true)});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0].path, "build/v/plain.py");
  EXPECT_EQ(files[0].source, hub.cache().blob(kHelloBlob));
  EXPECT_EQ(files[1].source, hub.cache().blob(kHelloSha256));
  EXPECT_EQ(read(files[0].source), "hello\n");
  EXPECT_EQ(read(files[1].source), "hello\n");
  EXPECT_EQ(sent_header(hub_->sent_to(resolve + "build/v/big.so").at(0), "Authorization"), "Bearer " + kToken);
  EXPECT_EQ(sent_header(hub_->sent_to("https://cdn.test/blob").at(0), "Authorization"), std::nullopt);
  // Cached now: a second fetch asks for nothing.
  const size_t asked = hub_->sent.size();
  hub.fetch(kC1, {file_entry("build/v/plain.py", false), file_entry("build/v/big.so", true)});
  EXPECT_EQ(hub_->sent.size(), asked);
}

TEST_F(HubClientTest, CorruptDownloadIsDiscardedAndFetchedAgain) {
  const std::string url = kHub + "/kernels/org/k/resolve/" + kC1 + "/build/v/big.so";
  hub_->on(url, {ok("HELLO\n"), ok("hello\n")});
  HubClient hub = client();
  std::vector<RepoFile> files = hub.fetch(kC1, {file_entry("build/v/big.so", true)});
  EXPECT_EQ(read(files.at(0).source), "hello\n");
  EXPECT_EQ(hub_->sent_to(url).size(), 2u);
  EXPECT_EQ(hub.stats().retries, 1u);
}

TEST_F(HubClientTest, DownloadThatNeverVerifiesNamesTheFile) {
  const std::string url = kHub + "/kernels/org/k/resolve/" + kC1 + "/build/v/big.so";
  hub_->on(url, {ok("HELLO\n")});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.fetch(kC1, {file_entry("build/v/big.so", true)}); }, ErrorKind::network);
  EXPECT_NE(msg.find("downloading 'build/v/big.so' from org/k: gave up after 5 attempts (sha256 mismatch (expected " + kHelloSha256), std::string::npos)
      << msg;
  EXPECT_FALSE(std::filesystem::exists(hub.cache().blob(kHelloSha256)));
}

TEST_F(HubClientTest, DownloadRefusedByTheHubIsAnAuthError) {
  const std::string url = kHub + "/kernels/org/k/resolve/" + kC1 + "/build/v/plain.py";
  hub_->on(url, {hub_error(403, "GatedRepo", "ask first")});
  HubClient hub = client();
  const std::string msg = kwheel::testing::error_of([&] { hub.fetch(kC1, {file_entry("build/v/plain.py", false)}); }, ErrorKind::auth);
  EXPECT_EQ(msg, "downloading 'build/v/plain.py' from org/k: HTTP 403 GatedRepo: ask first");
  EXPECT_EQ(hub_->sent_to(url).size(), 1u);  // not retried
}
