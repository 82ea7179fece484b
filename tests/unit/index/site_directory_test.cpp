// The site's directory on a real filesystem (a temp dir): a page whose bytes
// did not change is not written again, what a run produced is recorded, and
// an update in place moves in only what the run wrote, removes what it no
// longer produces, and never walks or touches SITE/files.
#include "kwheel/index/site_directory.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"

namespace kwheel::site {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st;
}

class SiteDirectoryTest : public ::testing::Test {
 protected:
  TempDir dir{"site-directory-test"};
  fs::path site = dir.path() / "site";
  void SetUp() override {
    write_text(site / "simple" / "relu" / "index.html", "relu 1\n");
    write_text(site / "simple" / "gelu" / "index.html", "gelu 1\n");
    write_text(site / "old-index" / "simple" / "index.html", "gone tonight\n");
    write_text(site / "files" / "relu-1.whl", "wheel bytes");
    write_text(site / "kwheel-index.json", "{}\n");
  }
};

TEST_F(SiteDirectoryTest, AnUnchangedPageIsNotWrittenAndEveryPageIsRecorded) {
  TempDir scratch = TempDir::beside(site, "new");
  const PageSink sink{scratch.path(), site, {}};
  sink.write("simple/relu/index.html", "relu 1\n");   // the same bytes
  sink.write("simple/gelu/index.html", "gelu 2!\n");  // the same size, other bytes
  EXPECT_TRUE(sink.keep("old-index/simple/index.html"));
  EXPECT_FALSE(sink.keep("simple/nothing/index.html"));
  EXPECT_FALSE(fs::exists(scratch.path() / "simple/relu/index.html"));
  EXPECT_EQ(slurp(scratch.path() / "simple/gelu/index.html"), "gelu 2!\n");
  EXPECT_FALSE(fs::exists(scratch.path() / "old-index/simple/index.html"));
  EXPECT_EQ(*sink.produced, (std::set<std::string>{"simple/relu/index.html", "simple/gelu/index.html", "old-index/simple/index.html"}));
}

TEST_F(SiteDirectoryTest, ANewSiteWritesEveryPage) {
  TempDir scratch = TempDir::beside(site, "new");
  const PageSink sink{scratch.path(), {}, {}};
  sink.write("simple/relu/index.html", "relu 1\n");
  EXPECT_EQ(slurp(scratch.path() / "simple/relu/index.html"), "relu 1\n");
}

TEST_F(SiteDirectoryTest, CommitInPlaceMovesInWhatChangedAndRemovesWhatIsNoLongerProduced) {
  const auto relu_page = stat_of(site / "simple/relu/index.html");
  const auto old_wheel = stat_of(site / "files/relu-1.whl");
  TempDir scratch = TempDir::beside(site, "new");
  const PageSink sink{scratch.path(), site, {}};
  sink.write("simple/relu/index.html", "relu 1\n");
  sink.write("simple/gelu/index.html", "gelu 2, longer\n");
  sink.write("simple/silu/index.html", "silu 1\n");  // a new project
  write_text(scratch.path() / "files" / "silu-1.whl", "new wheel");
  write_text(scratch.path() / "kwheel-index.json", "{\"files\": 2}\n");

  commit_in_place(scratch, site, *sink.produced);

  EXPECT_EQ(slurp(site / "simple/gelu/index.html"), "gelu 2, longer\n");
  EXPECT_EQ(slurp(site / "simple/silu/index.html"), "silu 1\n");
  EXPECT_EQ(slurp(site / "files/silu-1.whl"), "new wheel");
  EXPECT_EQ(slurp(site / "kwheel-index.json"), "{\"files\": 2}\n");
  // The page this run kept is the same file, the wheel the site held too.
  EXPECT_EQ(stat_of(site / "simple/relu/index.html").st_ino, relu_page.st_ino);
  EXPECT_EQ(stat_of(site / "files/relu-1.whl").st_ino, old_wheel.st_ino);
  // What it no longer produces is gone, with the directories that leaves empty.
  EXPECT_FALSE(fs::exists(site / "old-index"));
  // Nothing is left in the scratch: it was all moved.
  for (const auto& e : fs::recursive_directory_iterator(scratch.path())) EXPECT_TRUE(e.is_directory()) << e.path();
}

TEST_F(SiteDirectoryTest, WithoutPruneTheCommitRemovesNothing) {
  // The settings of the last run: it produces every page that one did, and
  // the site is not walked for pages to remove.
  TempDir scratch = TempDir::beside(site, "new");
  const PageSink sink{scratch.path(), site, {}};
  sink.write("simple/gelu/index.html", "gelu 2, longer\n");
  commit_in_place(scratch, site, *sink.produced, /*prune=*/false);
  EXPECT_EQ(slurp(site / "simple/gelu/index.html"), "gelu 2, longer\n");
  EXPECT_EQ(slurp(site / "old-index/simple/index.html"), "gone tonight\n");
  EXPECT_EQ(slurp(site / "simple/relu/index.html"), "relu 1\n");
}

TEST_F(SiteDirectoryTest, CommitInPlaceNeverWalksFiles) {
  // A file in SITE/files that no page names (a run stopped part-way left it)
  // is not this commit's to remove: files are only ever added.
  write_text(site / "files" / "stray.whl", "stray");
  TempDir scratch = TempDir::beside(site, "new");
  const PageSink sink{scratch.path(), site, {}};
  sink.write("simple/relu/index.html", "relu 1\n");
  sink.write("simple/gelu/index.html", "gelu 1\n");
  commit_in_place(scratch, site, *sink.produced);
  EXPECT_TRUE(fs::exists(site / "files" / "stray.whl"));
  EXPECT_TRUE(fs::exists(site / "files" / "relu-1.whl"));
}

TEST_F(SiteDirectoryTest, PlaceFileLinksByDefaultAndCopiesWhenAsked) {
  const fs::path from = dir.path() / "dist.whl";
  write_text(from, "dist bytes");
  const Placed linked = place_file(from, dir.path() / "a.whl", Placement::link);
  // ext4 and tmpfs have no reflinks: a hard link; btrfs and XFS: a reflink.
  if (linked == Placed::hard_link) EXPECT_EQ(stat_of(dir.path() / "a.whl").st_ino, stat_of(from).st_ino);
  else EXPECT_EQ(linked, Placed::reflink);
  EXPECT_EQ(place_file(from, dir.path() / "b.whl", Placement::copy), Placed::copy);
  EXPECT_NE(stat_of(dir.path() / "b.whl").st_ino, stat_of(from).st_ino);
  EXPECT_EQ(slurp(dir.path() / "b.whl"), "dist bytes");
  // The destination must not exist: a site file is never overwritten.
  EXPECT_THROW(place_file(from, dir.path() / "b.whl", Placement::copy), Error);
}

}  // namespace
}  // namespace kwheel::site
