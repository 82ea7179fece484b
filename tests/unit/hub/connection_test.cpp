// One way to reach a server: the CA order every command shares, pip's
// credential sources for an index and where those credentials may go.
// Every test starts from an environment with none of the variables set and
// a private HOME (no ~/.netrc). Passwords are long and distinct: each one
// used is redacted process-wide from then on, in every later test's errors.
#include "kwheel/hub/connection.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "error_support.hpp"
#include "fake_transport.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::FakeTransport;
using testing::ScopedEnv;
using testing::sent_header;

// base64 of "user:password" computed by coreutils, not by kwheel.
std::string base64(const std::string& text) {
  const std::string cmd = "printf '%s' '" + text + "' | base64 -w0";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), &::pclose);
  char buf[256] = {};
  const size_t n = std::fread(buf, 1, sizeof buf - 1, pipe.get());
  return std::string(buf, n);
}

class ConnectionTest : public ::testing::Test {
 protected:
  ConnectionTest() : dir_("conn") {
    for (const char* name : {"KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT", "SSL_CLIENT_CERT", "PIP_CLIENT_CERT",
                             "NETRC", "CURL_CA_BUNDLE"})
      set(name, nullptr);
    set("HOME", dir_.path().c_str());
    set("PATH", "/usr/bin:/bin");  // no keyring program unless a test puts one first
  }
  ~ConnectionTest() override {
    while (!env_.empty()) env_.pop_back();
  }
  void set(const char* name, const char* value) { env_.push_back(std::make_unique<ScopedEnv>(name, value)); }
  fs::path file(const std::string& name, const std::string& text = "pem") {
    std::ofstream(dir_.path() / name) << text;
    return dir_.path() / name;
  }
  std::string pem(const std::string& name) { return file(name).string(); }
  const fs::path& dir() const { return dir_.path(); }

 private:
  TempDir dir_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

// ---- the CA order ----

TEST_F(ConnectionTest, SystemCasWhenNothingIsGiven) {
  const TlsSettings t = resolve_tls({});
  EXPECT_EQ(t.ca_bundle, "");
  EXPECT_EQ(t.ca_from, "system");
  EXPECT_EQ(t.client_cert, "");
}

TEST_F(ConnectionTest, EachVariableAloneIsRead) {
  for (const char* name : kCaVariables) {
    ScopedEnv one(name, pem(name).c_str());
    const TlsSettings t = resolve_tls({});
    EXPECT_EQ(t.ca_from, name);
    EXPECT_EQ(t.ca_bundle, (dir() / name).string());
  }
}

TEST_F(ConnectionTest, VariablesInTheDocumentedOrder) {
  // Every pair: the one listed first wins, whichever is set first.
  const std::vector<std::string> order(std::begin(kCaVariables), std::end(kCaVariables));
  EXPECT_EQ(order, (std::vector<std::string>{"KWHEEL_CA_BUNDLE", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"}));
  for (size_t hi = 0; hi < order.size(); ++hi)
    for (size_t lo = hi + 1; lo < order.size(); ++lo) {
      ScopedEnv low(order[lo].c_str(), pem(order[lo]).c_str());
      ScopedEnv high(order[hi].c_str(), pem(order[hi]).c_str());
      EXPECT_EQ(resolve_tls({}).ca_from, order[hi]) << order[hi] << " over " << order[lo];
    }
}

TEST_F(ConnectionTest, FlagBeatsEveryVariable) {
  for (const char* name : kCaVariables) set(name, pem(name).c_str());
  const TlsSettings t = resolve_tls({{{"--cert", pem("flag.pem")}}, {}});
  EXPECT_EQ(t.ca_from, "--cert");
  EXPECT_EQ(t.ca_bundle, (dir() / "flag.pem").string());
}

TEST_F(ConnectionTest, CommandSourcesComeBeforeTheVariablesInTheirOwnOrder) {
  set("SSL_CERT_FILE", pem("ssl.pem").c_str());
  // publish: --cert, then TWINE_CERT, then the .pypirc's ca_cert.
  EXPECT_EQ(resolve_tls({{{"--cert", ""}, {"TWINE_CERT", pem("twine.pem")}, {"ca_cert", pem("rc.pem")}}, {}}).ca_from, "TWINE_CERT");
  EXPECT_EQ(resolve_tls({{{"--cert", ""}, {"TWINE_CERT", ""}, {"ca_cert", pem("rc.pem")}}, {}}).ca_from, "ca_cert");
  EXPECT_EQ(resolve_tls({{{"--cert", ""}, {"TWINE_CERT", ""}}, {}}).ca_from, "SSL_CERT_FILE");
}

TEST_F(ConnectionTest, AnEmptyVariableCountsAsUnset) {
  set("KWHEEL_CA_BUNDLE", "");
  set("PIP_CERT", pem("pip.pem").c_str());
  EXPECT_EQ(resolve_tls({}).ca_from, "PIP_CERT");
}

TEST_F(ConnectionTest, UnreadableFileNamesItsSource) {
  set("SSL_CERT_FILE", "/nonexistent/ca.pem");
  const std::string msg = error_of([] { resolve_tls({}); }, ErrorKind::usage);
  EXPECT_EQ(msg, "SSL_CERT_FILE '/nonexistent/ca.pem' is not a readable file; give a PEM file of CA certificates, or unset SSL_CERT_FILE");
  const std::string dir_msg = error_of([this] { resolve_tls({{{"--cert", dir().string()}}, {}}); }, ErrorKind::usage);
  EXPECT_EQ(dir_msg, "--cert '" + dir().string() + "' is not a readable file; give a PEM file of CA certificates");
}

TEST_F(ConnectionTest, ClientCertFlagThenUvsThenPips) {
  set("PIP_CLIENT_CERT", pem("pip-client.pem").c_str());
  EXPECT_EQ(resolve_tls({}).client_cert_from, "PIP_CLIENT_CERT");
  set("SSL_CLIENT_CERT", pem("uv-client.pem").c_str());
  EXPECT_EQ(resolve_tls({}).client_cert_from, "SSL_CLIENT_CERT");
  const TlsSettings t = resolve_tls({{}, {{"--client-cert", pem("flag-client.pem")}}});
  EXPECT_EQ(t.client_cert_from, "--client-cert");
  EXPECT_EQ(t.client_cert, (dir() / "flag-client.pem").string());
  const std::string msg = error_of([] { resolve_tls({{}, {{"--client-cert", "/nonexistent/me.pem"}}}); }, ErrorKind::usage);
  EXPECT_NE(msg.find("--client-cert '/nonexistent/me.pem' is not a readable file; give a PEM file of the client certificate and its private key"),
            std::string::npos)
      << msg;
}

TEST_F(ConnectionTest, PipGetsTheSameSettingsAsArgsAndEnvironment) {
  const TlsSettings t = resolve_tls({{{"--cert", pem("ca.pem")}}, {{"--client-cert", pem("me.pem")}}});
  const std::string ca = (dir() / "ca.pem").string(), me = (dir() / "me.pem").string();
  EXPECT_EQ(pip_tls_args(t), (std::vector<std::string>{"--cert", ca, "--client-cert", me}));
  ProcessOptions child;
  apply_tls(t, child);
  EXPECT_EQ(child.set_env["PIP_CERT"], ca);
  EXPECT_EQ(child.set_env["REQUESTS_CA_BUNDLE"], ca);  // else requests lets an inherited one beat pip's --cert
  EXPECT_EQ(child.set_env["SSL_CERT_FILE"], ca);       // uv, huggingface_hub
  EXPECT_EQ(child.set_env["PIP_CLIENT_CERT"], me);
  EXPECT_EQ(child.set_env["SSL_CLIENT_CERT"], me);
  EXPECT_TRUE(pip_tls_args(resolve_tls({})).empty());
}

TEST_F(ConnectionTest, ChildWithSystemCasInheritsNoOtherBundle) {
  ProcessOptions child;
  apply_tls(resolve_tls({}), child);
  EXPECT_TRUE(child.set_env.empty());
  for (const char* name : {"REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "PIP_CERT"})
    EXPECT_NE(std::find(child.unset_env.begin(), child.unset_env.end(), name), child.unset_env.end()) << name;
  // Set and unset at once: run_process unsets, then sets.
  set("CURL_CA_BUNDLE", "/somewhere/else.pem");
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo \"[$CURL_CA_BUNDLE]\""}, child);
  EXPECT_EQ(r.out, "[]\n");
}

// ---- userinfo ----

TEST_F(ConnectionTest, UserinfoIsSplitAndDecodedAsPipDoes) {
  const UrlUserinfo u = split_userinfo("https://us%40er:p%3Ass%2Fw@idx.example:8443/simple/");
  EXPECT_EQ(u.url, "https://idx.example:8443/simple/");
  EXPECT_EQ(*u.username, "us@er");
  EXPECT_EQ(u.password->reveal(), "p:ss/w");
  // The last '@' ends the userinfo, the first ':' ends the user.
  const UrlUserinfo at = split_userinfo("https://user:p@ss:w@idx.example/simple/");
  EXPECT_EQ(at.url, "https://idx.example/simple/");
  EXPECT_EQ(*at.username, "user");
  EXPECT_EQ(at.password->reveal(), "p@ss:w");
  const UrlUserinfo none = split_userinfo("https://idx.example/simple/a@b");
  EXPECT_EQ(none.url, "https://idx.example/simple/a@b");
  EXPECT_FALSE(none.username);
  const UrlUserinfo user_only = split_userinfo("https://token123@idx.example/");
  EXPECT_EQ(*user_only.username, "token123");
  EXPECT_FALSE(user_only.password);
}

// ---- credentials: sources, order, origin ----

struct Fixture {
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  HttpOptions base() const {
    HttpOptions o;
    o.max_attempts = 1;
    return o;
  }
};

TEST_F(ConnectionTest, UrlCredentialsGoToTheIndexOriginOnly) {
  Fixture f;
  IndexConnection c("http://alice:url-pass@idx.example:8080/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(c.url(), "http://idx.example:8080/simple/");
  EXPECT_EQ(c.credentials_from(), "the URL");
  c.http().get("http://idx.example:8080/simple/x/");
  c.http().get("http://files.example:8080/x.whl");
  c.http().get("https://idx.example:8080/x.whl");  // another scheme is another origin
  ASSERT_EQ(f.transport->sent.size(), 3u);
  EXPECT_EQ(sent_header(f.transport->sent[0], "Authorization"), "Basic " + base64("alice:url-pass"));
  EXPECT_FALSE(sent_header(f.transport->sent[1], "Authorization"));
  EXPECT_FALSE(sent_header(f.transport->sent[2], "Authorization"));
}

TEST_F(ConnectionTest, NetrcForTheHostWhenTheUrlHasNone) {
  Fixture f;
  const fs::path netrc = file("n", "machine other.example login x password y\nmachine idx.example login bob password netrc-pass\n");
  set("NETRC", netrc.c_str());
  IndexConnection c("http://idx.example:8080/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(c.credentials_from(), netrc.string());
  c.http().get("http://idx.example:8080/simple/");
  EXPECT_EQ(sent_header(f.transport->sent[0], "Authorization"), "Basic " + base64("bob:netrc-pass"));
}

TEST_F(ConnectionTest, UrlBeatsNetrc) {
  Fixture f;
  set("NETRC", file("n", "default login bob password netrc-pass\n").c_str());
  IndexConnection c("http://alice:url-pass@idx.example/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(c.credentials_from(), "the URL");
}

TEST_F(ConnectionTest, HomeNetrcIsReadWhenNetrcIsUnset) {
  Fixture f;
  file(".netrc", "default login bob password home-netrc-pw\n");
  IndexConnection c("http://idx.example/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(c.credentials_from(), (dir() / ".netrc").string());
}

// A fake `keyring` first on PATH: records its argv, prints `answer`.
fs::path fake_keyring(const fs::path& dir, const std::string& answer) {
  const fs::path exe = dir / "keyring";
  std::ofstream(exe) << "#!/bin/sh\necho \"$@\" >> '" << (dir / "keyring.log").string() << "'\n" << answer << "\n";
  fs::permissions(exe, fs::perms::owner_all);
  return exe;
}

TEST_F(ConnectionTest, KeyringIsAskedAfterA401ThenTheRequestRepeated) {
  Fixture f;
  fake_keyring(dir(), R"(echo '{"username": "kr", "password": "kr-pass"}')");
  set("PATH", (dir().string() + ":/usr/bin:/bin").c_str());
  const std::string page = "http://idx.example:8080/simple/";
  f.transport->on(page, {testing::FakeAnswer{401, "", {}, "Unauthorized", Exchange::Failure::none}, testing::ok("<html/>")});
  IndexConnection c(page, {}, f.base(), f.transport);
  EXPECT_EQ(c.credentials_from(), "");
  EXPECT_EQ(c.http().get(page).status, 401);
  EXPECT_FALSE(sent_header(f.transport->sent[0], "Authorization"));
  ASSERT_TRUE(c.retry_with_keyring(page));
  EXPECT_EQ(c.http().get(page).status, 200);
  EXPECT_EQ(sent_header(f.transport->sent[1], "Authorization"), "Basic " + base64("kr:kr-pass"));
  EXPECT_NE(c.credentials_from().find("keyring"), std::string::npos);
  // pip's service names: the index URL first; it answered, so no second get.
  EXPECT_EQ(testing::slurp(dir() / "keyring.log"), "--mode=creds --output=json get " + page + "\n");
  EXPECT_FALSE(c.retry_with_keyring(page));  // asked once
}

TEST_F(ConnectionTest, KeyringFallsBackToHostAndPortThenGivesUp) {
  Fixture f;
  fake_keyring(dir(), "exit 1");
  set("PATH", (dir().string() + ":/usr/bin:/bin").c_str());
  IndexConnection c("http://tok@idx.example:8080/simple", {}, f.base(), f.transport);
  EXPECT_FALSE(c.retry_with_keyring("http://idx.example:8080/simple/p/"));
  EXPECT_EQ(testing::slurp(dir() / "keyring.log"),
            "--mode=creds --output=json get http://idx.example:8080/simple/ tok\n--mode=creds --output=json get idx.example:8080 tok\n");
}

TEST_F(ConnectionTest, NetrcBeatsKeyringAndUrlCredentialsNeverAskIt) {
  Fixture f;
  fake_keyring(dir(), R"(echo '{"username": "kr", "password": "kr-pass"}')");
  set("PATH", (dir().string() + ":/usr/bin:/bin").c_str());
  set("NETRC", file("n", "default login bob password netrc-pass\n").c_str());
  IndexConnection from_netrc("http://idx.example/simple/", {}, f.base(), f.transport);
  from_netrc.http().get("http://idx.example/simple/");
  EXPECT_EQ(sent_header(f.transport->sent[0], "Authorization"), "Basic " + base64("bob:netrc-pass"));
  EXPECT_FALSE(fs::exists(dir() / "keyring.log"));  // not asked before a 401
  IndexConnection from_url("http://url-user:url-pass-2@idx.example/simple/", {}, f.base(), f.transport);
  EXPECT_FALSE(from_url.retry_with_keyring("http://idx.example/simple/"));
  EXPECT_FALSE(fs::exists(dir() / "keyring.log"));
  IndexConnection disabled("http://idx.example/simple/", {{}, KeyringProvider::disabled}, f.base(), f.transport);
  EXPECT_FALSE(disabled.retry_with_keyring("http://idx.example/simple/"));
  EXPECT_FALSE(fs::exists(dir() / "keyring.log"));
}

TEST_F(ConnectionTest, RefusalsSayWhatToGiveOrWhoseWereRefused) {
  Fixture f;
  IndexConnection none("http://127.0.0.1:8080/simple/", {}, f.base(), f.transport);
  const Error e = none.refused("http://127.0.0.1:8080/simple/", 401);
  EXPECT_EQ(e.kind(), ErrorKind::auth);
  const std::string msg = e.what();
  for (const char* part : {"http://127.0.0.1:8080/simple/ wants credentials (HTTP 401)", "~/.netrc", "keyring set", "USER:PASSWORD@"})
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  const fs::path netrc = file("n", "machine 127.0.0.1 login bob password never-shown-pw\n");
  set("NETRC", netrc.c_str());
  IndexConnection with("http://127.0.0.1:8080/simple/", {}, f.base(), f.transport);
  const std::string refused = with.refused("http://127.0.0.1:8080/simple/", 401).what();
  EXPECT_NE(refused.find("credentials from " + netrc.string() + " for 127.0.0.1 were refused"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("never-shown-pw"), std::string::npos);
}

TEST_F(ConnectionTest, ChildIndexUrlCarriesTheCredentialsPercentEncoded) {
  Fixture f;
  set("NETRC", file("n", "machine idx.example login \"a b@c\" password \"child:pw/1@x\"\n").c_str());
  IndexConnection c("https://idx.example/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(c.url_with_credentials().reveal(), "https://a%20b%40c:child%3Apw%2F1%40x@idx.example/simple/");
  // pip reads it back as it was: the same split kwheel does.
  const UrlUserinfo back = split_userinfo(c.url_with_credentials().reveal());
  EXPECT_EQ(*back.username, "a b@c");
  EXPECT_EQ(back.password->reveal(), "child:pw/1@x");
  IndexConnection none("https://other.example/simple/", {}, f.base(), f.transport);
  EXPECT_EQ(none.url_with_credentials().reveal(), "https://other.example/simple/");
}

TEST_F(ConnectionTest, A400OverHttpsWithoutAClientCertificateNamesTheFlag) {
  Fixture f;
  IndexConnection tls("https://idx.example/simple/", {}, f.base(), f.transport);
  EXPECT_NE(tls.status_hint(400).find("--client-cert FILE"), std::string::npos);
  EXPECT_EQ(tls.status_hint(500), "");
  EXPECT_EQ(IndexConnection("http://idx.example/simple/", {}, f.base(), f.transport).status_hint(400), "");
  ConnectionSettings with_cert;
  with_cert.tls = resolve_tls({{}, {{"--client-cert", pem("me.pem")}}});
  EXPECT_EQ(IndexConnection("https://idx.example/simple/", with_cert, f.base(), f.transport).status_hint(400), "");
}

TEST_F(ConnectionTest, PasswordsAreRedactedOnceUsed) {
  Fixture f;
  IndexConnection c("http://alice:Redact%2BMe-123@idx.example/simple/", {}, f.base(), f.transport);
  const Error e(ErrorKind::network, "server said: Redact+Me-123 and Redact%2BMe-123");
  EXPECT_EQ(std::string(e.what()).find("Redact"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace kwheel
