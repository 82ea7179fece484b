// The keyring program, asked as pip's subprocess provider asks it: a fake
// `keyring` first on PATH records its argv and answers.
#include "kwheel/hub/keyring.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::ScopedEnv;
using testing::slurp;

// A `keyring` that appends its argv (one per line, then "--") to argv.log
// and runs `body`.
class FakeKeyring {
 public:
  explicit FakeKeyring(const std::string& body) : dir_("keyring"), path_(std::string(dir_.path()) + ":" + std::getenv("PATH")) {
    const fs::path exe = dir_.path() / "keyring";
    std::ofstream(exe) << "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> '" << log().string() << "'; done\necho -- >> '" << log().string()
                       << "'\n" << body << "\n";
    fs::permissions(exe, fs::perms::owner_all);
  }
  fs::path log() const { return dir_.path() / "argv.log"; }
  fs::path program() const { return dir_.path() / "keyring"; }
  std::string calls() const { return slurp(log()); }

 private:
  TempDir dir_;
  std::string path_;
  ScopedEnv env_{"PATH", path_.c_str()};
};

TEST(Keyring, ProviderValuesArePips) {
  EXPECT_EQ(parse_keyring_provider("auto", "--keyring-provider"), KeyringProvider::automatic);
  EXPECT_EQ(parse_keyring_provider("subprocess", "--keyring-provider"), KeyringProvider::subprocess);
  EXPECT_EQ(parse_keyring_provider("disabled", "--keyring-provider"), KeyringProvider::disabled);
  const std::string msg = error_of([] { parse_keyring_provider("import", "--keyring-provider"); }, ErrorKind::usage);
  EXPECT_NE(msg.find("--keyring-provider 'import'"), std::string::npos) << msg;
}

TEST(Keyring, ProgramIsTheFirstOnPath) {
  FakeKeyring fake("exit 1");
  EXPECT_EQ(keyring_program(KeyringProvider::automatic), fake.program());
  EXPECT_EQ(keyring_program(KeyringProvider::subprocess), fake.program());
  EXPECT_FALSE(keyring_program(KeyringProvider::disabled));
  ScopedEnv empty("PATH", "/nonexistent");
  EXPECT_FALSE(keyring_program(KeyringProvider::automatic));
}

TEST(Keyring, AsksAsPipDoesAndReadsTheJson) {
  FakeKeyring fake(R"(echo '{"username": "kr-user", "password": "kr-pass"}')");
  auto got = keyring_get(fake.program(), "https://idx.example/simple/", std::nullopt);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->username, "kr-user");
  EXPECT_EQ(got->password.reveal(), "kr-pass");
  keyring_get(fake.program(), "idx.example:443", std::string("alice"));
  EXPECT_EQ(fake.calls(), "--mode=creds\n--output=json\nget\nhttps://idx.example/simple/\n--\n"
                          "--mode=creds\n--output=json\nget\nidx.example:443\nalice\n--\n");
}

TEST(Keyring, NonZeroExitIsNone) {
  FakeKeyring fake("exit 1");
  EXPECT_FALSE(keyring_get(fake.program(), "h:1", std::nullopt));
}

TEST(Keyring, OldKeyringAndGarbageAreErrorsThatQuoteNothing) {
  FakeKeyring old("echo 'keyring: error: unrecognized arguments: --mode=creds' >&2; exit 2");
  EXPECT_NE(error_of([&] { keyring_get(old.program(), "h:1", std::nullopt); }).find("older than 25.2.1"), std::string::npos);
  FakeKeyring garbage("echo 'plain-password-on-stdout'");
  const std::string msg = error_of([&] { keyring_get(garbage.program(), "h:1", std::nullopt); });
  EXPECT_EQ(msg.find("plain-password"), std::string::npos) << msg;
}

}  // namespace
}  // namespace kwheel
