// The identity cache beside a real site directory: what one run writes the
// next reads back, the form kwheel wrote before is still read (an upgrade
// hashes nothing again), and a line that is not what kwheel writes is
// skipped, never trusted, never fatal.
#include "kwheel/index/site_identities.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "kwheel/base/temp_dir.hpp"
#include "kwheel/index/site_directory.hpp"

namespace kwheel::site {
namespace {

namespace fs = std::filesystem;

class SiteIdentitiesTest : public ::testing::Test {
 protected:
  TempDir dir{"site-identities-test"};
  fs::path site = dir.path() / "site";
  fs::path cache = dir.path() / ".site.kwheel-identities";
  std::map<std::string, Entry> entries;

  void SetUp() override {
    for (const char* name : {"a-1-py3-none-any.whl", "b-1-py3-none-any.whl", "c-1-py3-none-any.whl"}) entries[name].filename = name;
  }
  std::map<std::string, Entry> blank() const {
    std::map<std::string, Entry> out;
    for (const auto& [name, _] : entries) out[name].filename = name;
    return out;
  }
};

TEST_F(SiteIdentitiesTest, WhatOneRunWritesTheNextReadsBack) {
  entries["a-1-py3-none-any.whl"].identity = FileIdentity{1234, -5, 18446744073709551615ull, 65024};
  entries["a-1-py3-none-any.whl"].metadata_identity = FileIdentity{1, 1796276062669136132, 2, 3};
  entries["b-1-py3-none-any.whl"].source_identity = FileIdentity{0, 0, 0, 0};
  write_identities(site, entries);
  auto back = blank();
  read_identities(site, back);
  for (const auto& [name, e] : entries) {
    EXPECT_EQ(back[name].identity, e.identity) << name;
    EXPECT_EQ(back[name].metadata_identity, e.metadata_identity) << name;
    EXPECT_EQ(back[name].source_identity, e.source_identity) << name;
  }
  EXPECT_FALSE(fs::exists(fs::path(cache) += ".tmp"));
}

TEST_F(SiteIdentitiesTest, TheJsonLinesOfEarlierRunsAreRead) {
  std::ofstream(cache) << R"({"filename":"a-1-py3-none-any.whl","identity":{"dev":7,"ino":6,"mtime_ns":5,"size":4}})" "\n"
                       << R"({"filename":"b-1-py3-none-any.whl","source_identity":{"dev":1,"ino":2,"mtime_ns":-3,"size":4}})" "\n";
  auto back = blank();
  read_identities(site, back);
  EXPECT_EQ(back["a-1-py3-none-any.whl"].identity, (FileIdentity{4, 5, 6, 7}));
  EXPECT_FALSE(back["a-1-py3-none-any.whl"].source_identity);
  EXPECT_EQ(back["b-1-py3-none-any.whl"].source_identity, (FileIdentity{4, -3, 2, 1}));
  EXPECT_FALSE(back["c-1-py3-none-any.whl"].identity);
}

TEST_F(SiteIdentitiesTest, ALineThatIsNotKwheelsIsSkipped) {
  std::ofstream(cache) << "kwheel-identities 2\n"
                       << "a-1-py3-none-any.whl\t1 2 3\t-\t-\n"           // three numbers: not an identity
                       << "b-1-py3-none-any.whl\t1 2 3 4 5\tx\t-\n"       // five, and a word
                       << "c-1-py3-none-any.whl\t9 8 7 6\t-1 2 3 4\t-\n"  // a negative size
                       << "unlisted-1-py3-none-any.whl\t1 2 3 4\t-\t-\n"
                       << "garbage\n";
  auto back = blank();
  read_identities(site, back);
  EXPECT_FALSE(back["a-1-py3-none-any.whl"].identity);
  EXPECT_FALSE(back["b-1-py3-none-any.whl"].identity);
  EXPECT_FALSE(back["b-1-py3-none-any.whl"].metadata_identity);
  EXPECT_EQ(back["c-1-py3-none-any.whl"].identity, (FileIdentity{9, 8, 7, 6}));
  EXPECT_FALSE(back["c-1-py3-none-any.whl"].metadata_identity);
  EXPECT_EQ(back.size(), 3u);
}

TEST_F(SiteIdentitiesTest, ANameThatWouldSplitItsLineIsNotWritten) {
  entries["bad\tname\n.whl"].identity = FileIdentity{1, 2, 3, 4};
  entries["a-1-py3-none-any.whl"].identity = FileIdentity{5, 6, 7, 8};
  write_identities(site, entries);
  auto back = blank();
  back["bad\tname\n.whl"];
  read_identities(site, back);
  EXPECT_FALSE(back["bad\tname\n.whl"].identity);
  EXPECT_EQ(back["a-1-py3-none-any.whl"].identity, (FileIdentity{5, 6, 7, 8}));
}

}  // namespace
}  // namespace kwheel::site
