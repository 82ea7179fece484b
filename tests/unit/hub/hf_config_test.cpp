// resolve_hub_config against huggingface_hub's own rules (constants.py and
// utils/_auth.py of huggingface_hub 2.x): flags first, then the HF_*
// variables, then the files under HF_HOME. Every test starts from an
// environment with none of those variables set and a private HOME.
#include "kwheel/hub/hf_config.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::ScopedEnv;

class HubConfigTest : public ::testing::Test {
 protected:
  HubConfigTest() : home_("unit") {
    for (const char* name : {"HF_ENDPOINT", "HF_TOKEN", "HF_TOKEN_PATH", "HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE",
                             "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HUGGING_FACE_HUB_TOKEN", "XDG_CACHE_HOME",
                             "KWHEEL_STALL_TIMEOUT", "KWHEEL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "PIP_CERT",
                             "SSL_CLIENT_CERT", "PIP_CLIENT_CERT"})
      env_.push_back(std::make_unique<ScopedEnv>(name, nullptr));
    set("HOME", home_.path().c_str());
  }
  ~HubConfigTest() override {
    while (!env_.empty()) env_.pop_back();  // newest first, so each restores what the one before it set
  }
  void set(const char* name, const std::string& value) { env_.push_back(std::make_unique<ScopedEnv>(name, value.c_str())); }
  const fs::path& home() const { return home_.path(); }
  HubConfig resolve(const HubFlags& flags = {}) {
    return resolve_hub_config(flags, [this](const std::string& w) { warnings.push_back(w); });
  }
  static void write(const fs::path& p, const std::string& text, fs::perms mode = fs::perms::owner_read | fs::perms::owner_write) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    fs::permissions(p, mode);
  }
  std::vector<std::string> warnings;

 private:
  TempDir home_;
  std::vector<std::unique_ptr<ScopedEnv>> env_;
};

// ---- defaults and the cache location ----

TEST_F(HubConfigTest, DefaultsWithNothingSet) {
  const HubConfig c = resolve();
  EXPECT_EQ(c.endpoint, "https://huggingface.co");
  // HF_HOME defaults to ~/.cache/huggingface, the hub cache to $HF_HOME/hub.
  EXPECT_EQ(c.cache_dir, home() / ".cache" / "huggingface" / "hub");
  EXPECT_FALSE(c.offline);
  EXPECT_TRUE(c.token.empty());
  EXPECT_EQ(c.token_source, "");
  EXPECT_EQ(c.repo_type, "kernel");
  EXPECT_FALSE(c.repo_type_forced);
  EXPECT_EQ(c.stall_timeout, std::chrono::seconds(60));  // docs/reliability.md: default 60 s
  EXPECT_EQ(c.tls.ca_bundle, "");
  EXPECT_TRUE(warnings.empty());
}

TEST_F(HubConfigTest, XdgCacheHomeMovesHfHome) {
  set("XDG_CACHE_HOME", "/srv/xdg");
  EXPECT_EQ(resolve().cache_dir, fs::path("/srv/xdg/huggingface/hub"));
}

TEST_F(HubConfigTest, HfHomeBeatsXdgCacheHome) {
  set("XDG_CACHE_HOME", "/srv/xdg");
  set("HF_HOME", "/srv/hf");
  EXPECT_EQ(resolve().cache_dir, fs::path("/srv/hf/hub"));
}

TEST_F(HubConfigTest, CacheVariablesInHuggingfaceHubOrder) {
  set("HF_HOME", "/srv/hf");
  set("HUGGINGFACE_HUB_CACHE", "/srv/legacy");  // the legacy name still beats HF_HOME
  EXPECT_EQ(resolve().cache_dir, fs::path("/srv/legacy"));
  set("HF_HUB_CACHE", "/srv/hub");  // the new name beats the legacy one
  EXPECT_EQ(resolve().cache_dir, fs::path("/srv/hub"));
  HubFlags flags;
  flags.cache_dir = "/srv/flag";  // and --cache-dir beats every variable
  EXPECT_EQ(resolve(flags).cache_dir, fs::path("/srv/flag"));
}

// ---- endpoint ----

TEST_F(HubConfigTest, EndpointFromVariableWithoutTrailingSlashes) {
  set("HF_ENDPOINT", "https://hub.example.org//");
  EXPECT_EQ(resolve().endpoint, "https://hub.example.org");  // ENDPOINT = getenv(...).rstrip("/")
  HubFlags flags;
  flags.endpoint = "http://127.0.0.1:8080/";
  EXPECT_EQ(resolve(flags).endpoint, "http://127.0.0.1:8080");
}

TEST_F(HubConfigTest, EndpointMustBeHttpOrHttps) {
  HubFlags flags;
  flags.endpoint = "ftp://hub.example.org";
  const std::string msg = error_of([&] { resolve(flags); }, ErrorKind::usage);
  EXPECT_NE(msg.find("ftp://hub.example.org"), std::string::npos) << msg;
  set("HF_ENDPOINT", "hub.example.org");
  error_of([&] { resolve(); }, ErrorKind::usage);
}

TEST_F(HubConfigTest, EndpointErrorQuotesNoPassword) {
  // Whatever the reason the endpoint is refused, its password is not in
  // the message; the flag or the variable it came from is named.
  HubFlags flags;
  flags.endpoint = "ftp://u:endpointFlagPW1@hub.example.org";
  std::string msg = error_of([&] { resolve(flags); }, ErrorKind::usage);
  EXPECT_EQ(msg.find("endpointFlagPW1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--endpoint 'ftp://hub.example.org'"), std::string::npos) << msg;
  set("HF_ENDPOINT", "u:endpointVarPW2@hub.example.org");
  msg = error_of([&] { resolve(); }, ErrorKind::usage);
  EXPECT_EQ(msg.find("endpointVarPW2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HF_ENDPOINT"), std::string::npos) << msg;
}

TEST_F(HubConfigTest, EndpointSchemeInAnyCase) {
  // RFC 3986 3.1: HTTPS:// is https://.
  set("HF_ENDPOINT", "HTTPS://Hub.Example.org/");
  EXPECT_EQ(resolve().endpoint, "https://Hub.Example.org");
}

// ---- offline ----

TEST_F(HubConfigTest, OfflineTakesHuggingfaceHubTrueValues) {
  // _is_true: value.upper() in {"1", "ON", "YES", "TRUE"}.
  for (const char* yes : {"1", "ON", "on", "YES", "yes", "TRUE", "True"}) {
    ScopedEnv e("HF_HUB_OFFLINE", yes);
    EXPECT_TRUE(resolve().offline) << yes;
  }
  for (const char* no : {"0", "false", "no", "off", "2", "y"}) {
    ScopedEnv e("HF_HUB_OFFLINE", no);
    EXPECT_FALSE(resolve().offline) << no;
  }
  HubFlags flags;
  flags.offline = true;
  EXPECT_TRUE(resolve(flags).offline);
}

// ---- token ----

TEST_F(HubConfigTest, TokenFlagBeatsVariableBeatsFile) {
  set("HF_HOME", (home() / "hf").string());
  write(home() / "hf" / "token", "hf_from_file");
  EXPECT_EQ(resolve().token.reveal(), "hf_from_file");
  EXPECT_EQ(resolve().token_source, (home() / "hf" / "token").string());

  set("HF_TOKEN", "hf_from_env");
  EXPECT_EQ(resolve().token.reveal(), "hf_from_env");
  EXPECT_EQ(resolve().token_source, "HF_TOKEN");

  HubFlags flags;
  flags.token = "hf_from_flag";
  EXPECT_EQ(resolve(flags).token.reveal(), "hf_from_flag");
  EXPECT_EQ(resolve(flags).token_source, "--token");
}

TEST_F(HubConfigTest, TokenFileAndVariableAreStrippedOfWhitespace) {
  // _clean_token strips surrounding spaces and newlines (`hf auth login`
  // files and `export HF_TOKEN=$(cat file)` both may carry them).
  write(home() / ".cache" / "huggingface" / "token", "  hf_abc\n");
  EXPECT_EQ(resolve().token.reveal(), "hf_abc");
  set("HF_TOKEN", "\thf_def \n");
  EXPECT_EQ(resolve().token.reveal(), "hf_def");
}

TEST_F(HubConfigTest, EmptyTokenVariableFallsBackToTheFile) {
  // `os.environ.get("HF_TOKEN") or ...`: an empty HF_TOKEN counts as unset.
  write(home() / ".cache" / "huggingface" / "token", "hf_file");
  set("HF_TOKEN", "");
  EXPECT_EQ(resolve().token.reveal(), "hf_file");
}

TEST_F(HubConfigTest, TokenPathVariableNamesTheFile) {
  write(home() / "elsewhere" / "tok", "hf_elsewhere\n");
  write(home() / ".cache" / "huggingface" / "token", "hf_default");
  set("HF_TOKEN_PATH", (home() / "elsewhere" / "tok").string());
  const HubConfig c = resolve();
  EXPECT_EQ(c.token.reveal(), "hf_elsewhere");
  EXPECT_EQ(c.token_source, (home() / "elsewhere" / "tok").string());
}

TEST_F(HubConfigTest, MissingOrEmptyTokenFileMeansNoToken) {
  EXPECT_TRUE(resolve().token.empty());
  write(home() / ".cache" / "huggingface" / "token", " \n");
  const HubConfig c = resolve();
  EXPECT_TRUE(c.token.empty());
  EXPECT_EQ(c.token_source, "");
  EXPECT_TRUE(warnings.empty());
}

TEST_F(HubConfigTest, WorldReadableTokenFileIsUsedWithOneWarning) {
  const fs::path file = home() / ".cache" / "huggingface" / "token";
  write(file, "hf_secret_value", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  const HubConfig c = resolve();
  EXPECT_EQ(c.token.reveal(), "hf_secret_value");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(file.string()), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("chmod 600"), std::string::npos) << warnings[0];
  EXPECT_EQ(warnings[0].find("hf_secret_value"), std::string::npos) << "a warning never shows the token";
}

TEST_F(HubConfigTest, PrivateTokenFileGivesNoWarning) {
  write(home() / ".cache" / "huggingface" / "token", "hf_secret_value");  // 0600
  EXPECT_EQ(resolve().token.reveal(), "hf_secret_value");
  EXPECT_TRUE(warnings.empty());
}

// ---- kwheel's own settings ----

TEST_F(HubConfigTest, RepoTypeFlag) {
  HubFlags flags;
  flags.repo_type = "model";
  const HubConfig c = resolve(flags);
  EXPECT_EQ(c.repo_type, "model");
  EXPECT_TRUE(c.repo_type_forced);
  flags.repo_type = "kernel";
  EXPECT_TRUE(resolve(flags).repo_type_forced);
  flags.repo_type = "dataset";
  const std::string msg = error_of([&] { resolve(flags); }, ErrorKind::usage);
  EXPECT_NE(msg.find("dataset"), std::string::npos) << msg;
}

TEST_F(HubConfigTest, StallTimeoutFlagBeatsVariable) {
  set("KWHEEL_STALL_TIMEOUT", "7");
  EXPECT_EQ(resolve().stall_timeout, std::chrono::seconds(7));
  HubFlags flags;
  flags.stall_timeout = "9";
  EXPECT_EQ(resolve(flags).stall_timeout, std::chrono::seconds(9));
  flags.stall_timeout = "0";
  EXPECT_NE(error_of([&] { resolve(flags); }, ErrorKind::usage).find("--stall-timeout"), std::string::npos);
  set("KWHEEL_STALL_TIMEOUT", "soon");
  EXPECT_NE(error_of([&] { resolve(); }, ErrorKind::usage).find("KWHEEL_STALL_TIMEOUT"), std::string::npos);
}

// The order itself is connection_test's; here, that the Hub commands use it,
// --ca-bundle as --cert's older name included.
TEST_F(HubConfigTest, CaBundleFollowsTheSharedOrder) {
  const fs::path a = home() / "a.pem", b = home() / "b.pem", c = home() / "c.pem";
  for (const auto& p : {a, b, c}) write(p, "-----BEGIN CERTIFICATE-----\n");
  set("REQUESTS_CA_BUNDLE", c.string());
  EXPECT_EQ(resolve().tls.ca_bundle, c.string());
  set("SSL_CERT_FILE", b.string());  // what huggingface_hub 2.4 reads
  EXPECT_EQ(resolve().tls.ca_from, "SSL_CERT_FILE");
  HubFlags flags;
  flags.tls.ca_bundle = a.string();
  EXPECT_EQ(resolve(flags).tls.ca_bundle, a.string());
  EXPECT_EQ(resolve(flags).tls.ca_from, "--ca-bundle");
  flags.tls.cert = a.string();
  EXPECT_NE(error_of([&] { resolve(flags); }, ErrorKind::usage).find("--cert and --ca-bundle are one option"), std::string::npos);
}

TEST_F(HubConfigTest, CaBundleMustBeAReadableFileAndTheErrorSaysWhereItCameFrom) {
  set("REQUESTS_CA_BUNDLE", (home() / "missing.pem").string());
  std::string msg = error_of([&] { resolve(); }, ErrorKind::usage);
  EXPECT_NE(msg.find("REQUESTS_CA_BUNDLE"), std::string::npos) << msg;
  EXPECT_NE(msg.find("missing.pem"), std::string::npos) << msg;
  HubFlags flags;
  flags.tls.ca_bundle = home().string();  // a directory
  msg = error_of([&] { resolve(flags); }, ErrorKind::usage);
  EXPECT_NE(msg.find("--ca-bundle"), std::string::npos) << msg;
}

// ---- repo ids ----

TEST(RepoId, HubShapedIdsAreAccepted) {
  for (const char* id : {"kernels-community/activation", "org/name", "A1/b.c_d-e", "kernels-community/flash-attn3"}) {
    EXPECT_TRUE(looks_like_repo_id(id)) << id;
    EXPECT_NO_THROW(check_repo_id(id)) << id;
  }
}

TEST(RepoId, OtherTextIsRefused) {
  // huggingface_hub's validate_repo_id refuses ".." and names that do not
  // start with a word character; kwheel also wants the ORG/ part.
  for (const char* id : {"activation", "a/b/c", "../etc", "org/na..me", "org/", "/name", "-org/name", "org/.name", "org/na me",
                         "org/name\n"}) {
    EXPECT_FALSE(looks_like_repo_id(id)) << id;
    const std::string msg = error_of([&] { check_repo_id(id); }, ErrorKind::usage);
    EXPECT_NE(msg.find("ORG/NAME"), std::string::npos) << msg;
  }
  EXPECT_FALSE(looks_like_repo_id("org/" + std::string(97, 'a')));  // 96 characters at most
  EXPECT_TRUE(looks_like_repo_id("org/" + std::string(96, 'a')));
}

// ---- where kwheel once disagreed with huggingface_hub 2.4 ----
// Each asserts huggingface_hub's own rule; each failed before hf_config
// followed it, so kwheel and `kernels` could resolve different caches,
// tokens or offline modes.

TEST_F(HubConfigTest, TransformersOfflineAlsoMeansOffline) {
  // HF_HUB_OFFLINE = _is_true(os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE"))
  set("TRANSFORMERS_OFFLINE", "1");
  EXPECT_TRUE(resolve().offline);
}

TEST_F(HubConfigTest, LegacyTokenVariableIsRead) {
  // _get_token_from_environment: HF_TOKEN or HUGGING_FACE_HUB_TOKEN.
  set("HUGGING_FACE_HUB_TOKEN", "hf_legacy");
  EXPECT_EQ(resolve().token.reveal(), "hf_legacy");
}

TEST_F(HubConfigTest, TildeInHfHomeIsExpanded) {
  // HF_HOME = expandvars(expanduser(getenv("HF_HOME", ...))).
  set("HF_HOME", "~/hf");
  EXPECT_EQ(resolve().cache_dir, home() / "hf" / "hub");
}

TEST_F(HubConfigTest, BlankTokenVariableFallsBackToTheFile) {
  // _clean_token("  ") is None, so get_token() goes on to the token file.
  write(home() / ".cache" / "huggingface" / "token", "hf_file");
  set("HF_TOKEN", "  ");
  EXPECT_EQ(resolve().token.reveal(), "hf_file");
}

TEST(RepoId, DoubleDashAndDotGitAreRefusedLikeHuggingfaceHub) {
  // validate_repo_id: no "--" (the cache folder separator) and no ".git" end.
  EXPECT_FALSE(looks_like_repo_id("org/a--b"));
  EXPECT_FALSE(looks_like_repo_id("org/name.git"));
}

}  // namespace
}  // namespace kwheel
