// The netrc file as pip reads it (requests' get_netrc_auth over Python
// 3.11's netrc module): which file, which entry, which tokens.
#include "kwheel/hub/netrc.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::ScopedEnv;

std::optional<NetrcEntry> lookup(const std::string& text, const std::string& host) { return netrc_lookup(text, host, "test.netrc"); }

TEST(Netrc, MachineEntryForTheHost) {
  auto e = lookup("machine a.example login alice password s3cret\nmachine b.example login bob password other\n", "b.example");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->login, "bob");
  EXPECT_EQ(e->password.reveal(), "other");
}

TEST(Netrc, DefaultWhenNoMachineMatches) {
  const std::string text = "default login anyone password dflt\nmachine a.example login alice password s3cret\n";
  EXPECT_EQ(lookup(text, "a.example")->login, "alice");
  EXPECT_EQ(lookup(text, "z.example")->login, "anyone");
  EXPECT_FALSE(lookup("machine a.example login alice password p\n", "z.example"));
}

TEST(Netrc, LastEntryOfAMachineWins) {
  // Python's netrc overwrites hosts[name] for each entry.
  auto e = lookup("machine h login first password one\nmachine h login second password two\n", "h");
  EXPECT_EQ(e->login, "second");
}

TEST(Netrc, AccountStandsInForAMissingLogin) {
  auto e = lookup("machine h account acct password pw", "h");
  EXPECT_EQ(e->login, "acct");
  EXPECT_EQ(lookup("machine h user u password pw", "h")->login, "u");  // "user" is login's other name
}

TEST(Netrc, QuotedAndEscapedTokens) {
  auto e = lookup("machine h login \"a b\" password \"p\\\"w d\"\n", "h");
  EXPECT_EQ(e->login, "a b");
  EXPECT_EQ(e->password.reveal(), "p\"w d");
  EXPECT_EQ(lookup("machine h login x password p\\ q", "h")->password.reveal(), "p q");
  EXPECT_EQ(lookup("machine h\n\tlogin\tx\r\n  password   #notacomment\n", "h")->login, "x");
}

TEST(Netrc, CommentsAndMacros) {
  const std::string text =
      "# the team's index\n"
      "machine h login x password p # trailing words are a comment\n"
      "macdef init\ncd /pub\nbinary\n\n"
      "machine g login y password q\n";
  EXPECT_EQ(lookup(text, "h")->password.reveal(), "p");
  EXPECT_EQ(lookup(text, "g")->login, "y");
}

TEST(Netrc, MalformedFileNamesTheLineNotTheToken) {
  const std::string msg = error_of([] { lookup("machine h login x password hunter2\nbogus hunter3\n", "h"); });
  EXPECT_NE(msg.find("test.netrc line 2"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("hunter"), std::string::npos) << msg;
  const std::string unterminated = error_of([] { lookup("macdef m\nline\n", "h"); });
  EXPECT_NE(unterminated.find("macdef"), std::string::npos) << unterminated;
  EXPECT_NE(error_of([] { lookup("machine", "h"); }).find("'machine' is not followed"), std::string::npos);
}

TEST(Netrc, FileIsNetrcThenHomeNetrcThenUnderscore) {
  TempDir home("netrc");
  ScopedEnv h("HOME", home.path().c_str());
  ScopedEnv n("NETRC", nullptr);
  EXPECT_FALSE(netrc_file());
  std::ofstream(home.path() / "_netrc") << "default login u password p\n";
  EXPECT_EQ(*netrc_file(), home.path() / "_netrc");
  std::ofstream(home.path() / ".netrc") << "default login u password p\n";
  EXPECT_EQ(*netrc_file(), home.path() / ".netrc");
  ScopedEnv elsewhere("NETRC", (home.path() / "other").c_str());
  EXPECT_EQ(*netrc_file(), home.path() / "other");  // named, even though it does not exist
}

TEST(Netrc, MissingFileGivesNothing) {
  TempDir dir("netrc");
  EXPECT_FALSE(netrc_lookup_file(dir.path() / "absent", "h"));
  std::ofstream(dir.path() / "n") << "machine h login u password from-file\n";
  EXPECT_EQ(netrc_lookup_file(dir.path() / "n", "h")->password.reveal(), "from-file");
}

}  // namespace
}  // namespace kwheel
