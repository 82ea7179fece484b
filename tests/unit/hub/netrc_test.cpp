// The netrc file as pip reads it (requests' get_netrc_auth over Python's
// netrc module): which file, which entry, which tokens. The corpus test
// holds the reader to what Python itself made of 660 files
// (tests/data/netrc/corpus.json, written by scripts/update-netrc-corpus).
#include "kwheel/hub/netrc.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "error_support.hpp"
#include "kwheel/base/error.hpp"
#include "kwheel/base/small_file.hpp"
#include "test_support.hpp"

namespace kwheel {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::ScopedEnv;

std::optional<NetrcEntry> lookup(const std::string& text, const std::string& host) { return netrc_lookup(text, host, "test.netrc"); }

nlohmann::json corpus() {
  return nlohmann::json::parse(read_small_file(fs::path(KWHEEL_TEST_DATA) / "netrc" / "corpus.json", 16 << 20, "netrc corpus"));
}

// Each case: Python's hosts (or its refusal), then pip's credentials for
// each host it was asked about, from kwheel's reader.
TEST(NetrcCorpus, ReadsEveryFileAsPythonDoes) {
  const nlohmann::json c = corpus();
  ASSERT_GE(c["cases"].size(), 600u);
  size_t refused = 0;
  for (const auto& k : c["cases"]) {
    const std::string name = k["name"], text = k["text"];
    SCOPED_TRACE(name);
    NetrcHosts hosts;
    if (k.contains("error")) {
      ++refused;
      EXPECT_THROW(parse_netrc(text, name), Error) << "Python refuses it: " << k["error"];
    } else {
      ASSERT_NO_THROW(hosts = parse_netrc(text, name));
      std::map<std::string, std::vector<std::string>> got;
      for (const auto& [host, e] : hosts) got[host] = {e.login, e.account, e.password.reveal()};
      EXPECT_EQ(got, (k["hosts"].get<std::map<std::string, std::vector<std::string>>>()));
    }
    for (const auto& [host, want] : k["auth"].items()) {
      const auto e = netrc_credentials(hosts, host);
      if (want.is_null()) {
        EXPECT_FALSE(e) << host;
      } else {
        ASSERT_TRUE(e) << host;
        EXPECT_EQ((std::vector<std::string>{e->login, e->password.reveal()}), want.get<std::vector<std::string>>()) << host;
      }
    }
  }
  EXPECT_GT(refused, 100u);
  EXPECT_LT(refused, c["cases"].size() - 100);
}

TEST(Netrc, PasswordStartingWithHashIsThePassword) {
  // What the issue saw: kwheel read it as a comment and sent "ci:".
  auto e = lookup("machine 127.0.0.1 login ci password #tok\n", "127.0.0.1");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->login, "ci");
  EXPECT_EQ(e->password.reveal(), "#tok");
}

TEST(Netrc, DefaultWhenNoMachineMatchesButNotForAnEmptyEntry) {
  const std::string text = "default login anyone password dflt\nmachine a.example login alice password s3cret\n";
  EXPECT_EQ(lookup(text, "a.example")->login, "alice");
  EXPECT_EQ(lookup(text, "z.example")->login, "anyone");
  EXPECT_FALSE(lookup("machine a.example login alice password p\n", "z.example"));
  EXPECT_FALSE(lookup(text + "machine e.example\n", "e.example"));  // requests: any() of the entry's own tuple
}

TEST(Netrc, RefusalNamesTheLineNotTheToken) {
  const std::string msg = error_of([] { lookup("machine h login x password hunter2\nbogus hunter3\n", "h"); });
  EXPECT_NE(msg.find("test.netrc line 2"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("hunter"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("bogus"), std::string::npos) << msg;
  const std::string macro = error_of([] { lookup("machine h login x password hunter2\n\nmacdef m\nhunter4 line\n", "h"); });
  EXPECT_NE(macro.find("test.netrc line 3: a 'macdef' is not ended by an empty line"), std::string::npos) << macro;
  EXPECT_EQ(macro.find("hunter"), std::string::npos) << macro;
  EXPECT_NE(error_of([] { lookup("machine", "h"); }).find("'machine' is not followed by a host name"), std::string::npos);
  // Python decodes the file as UTF-8 and fails (pip stops with a traceback).
  EXPECT_NE(error_of([] { lookup("machine h login \xff password p\n", "h"); }).find("not UTF-8"), std::string::npos);
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
  ScopedEnv tilde("NETRC", "~/team.netrc");         // requests expands it
  EXPECT_EQ(*netrc_file(), home.path() / "team.netrc");
  ScopedEnv empty("NETRC", "");  // set but empty: no file at all, not ~/.netrc
  EXPECT_FALSE(netrc_lookup_file(*netrc_file(), "h"));
}

TEST(Netrc, MissingFileGivesNothing) {
  TempDir dir("netrc");
  EXPECT_FALSE(netrc_lookup_file(dir.path() / "absent", "h"));
  std::ofstream(dir.path() / "n") << "machine h login u password from-file\n";
  EXPECT_EQ(netrc_lookup_file(dir.path() / "n", "h")->password.reveal(), "from-file");
}

TEST(Netrc, FilePythonRefusesGivesNothingWithOneWarning) {
  // requests' get_netrc_auth catches NetrcParseError and OSError: pip goes
  // on without the file, and so does kwheel, saying so once.
  TempDir dir("netrc");
  const fs::path file = dir.path() / "n";
  std::ofstream(file) << "machine h login u password hunter5\nmachine o login o password q\nmacdef init";
  std::vector<std::string> said;
  auto warn = [&](const std::string& line) { said.push_back(line); };
  EXPECT_FALSE(netrc_lookup_file(file, "h", warn));
  EXPECT_FALSE(netrc_lookup_file(file, "o", warn));
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("netrc file '" + file.string() + "' line 3"), std::string::npos) << said[0];
  EXPECT_NE(said[0].find("no credentials are taken from it"), std::string::npos) << said[0];
  EXPECT_EQ(said[0].find("hunter5"), std::string::npos) << said[0];
  // A directory in NETRC's place: Python's open() fails (OSError), skipped too.
  EXPECT_FALSE(netrc_lookup_file(dir.path(), "h", warn));
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("is not a file"), std::string::npos) << said[1];
}

}  // namespace
}  // namespace kwheel
