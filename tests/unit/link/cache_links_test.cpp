// The cache kernels 0.17.2 reads (_versions.py: refs/vN holds the commit;
// resolver.py: snapshots/<commit>/build/<variant>/metadata.json), written
// as links to installed package directories, on real directories.
#include "kwheel/link/cache_links.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;
using kwheel::testing::ScopedEnv;
using kwheel::testing::slurp;
using kwheel::testing::write_file;

namespace {

const std::string kA(40, 'a'), kB(40, 'b');

struct Fixture {
  TempDir tmp{"cache-links"};
  fs::path cache = tmp.path() / "cache";
  fs::path site = tmp.path() / "site";
  Fixture() {
    write_file(site / "img2gray" / "metadata.json", "{}");
    write_file(site / "relu" / "metadata.json", "{}");
  }
  LinkEntry entry(const std::string& repo, const std::string& commit, std::uint64_t n, const std::string& pkg) const {
    return {{pkg, repo, commit, "torch-cpu", n}, site / pkg, pkg + " 1.0"};
  }
  fs::path folder(const std::string& name) const { return cache / name; }
};

}  // namespace

TEST(CacheLinks, FolderNamesAreHuggingfaceHubs) {
  EXPECT_EQ(cache_folder_name("kernels-community/img2gray"), "kernels--kernels-community--img2gray");
}

TEST(CacheLinks, DefaultIsKernelsCacheElseTheHubCache) {
  ScopedEnv k("KERNELS_CACHE", "/k/cache"), h("HF_HUB_CACHE", "/h/cache");
  EXPECT_EQ(default_kernels_cache(), fs::path("/k/cache"));
  ScopedEnv none("KERNELS_CACHE", nullptr);
  EXPECT_EQ(default_kernels_cache(), fs::path("/h/cache"));
}

TEST(CacheLinks, RefsAndSnapshotsPointAtTheInstalledPackage) {
  Fixture f;
  const auto change = write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kA, 1, "img2gray")});
  EXPECT_EQ(change.linked, std::vector<std::string>{"org/img2gray"});
  const fs::path repo = f.folder("kernels--org--img2gray");
  EXPECT_EQ(slurp(repo / "refs" / "v1"), kA);
  const fs::path variant = repo / "snapshots" / kA / "build" / "torch-cpu";
  EXPECT_TRUE(fs::is_symlink(variant));
  EXPECT_EQ(fs::read_symlink(variant), f.site / "img2gray");
  EXPECT_TRUE(fs::exists(variant / "metadata.json"));
  EXPECT_TRUE(fs::exists(repo / kLinkMarker));
  // Nothing but the repo folders is left in the cache: no temp names.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(f.cache)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"kernels--org--img2gray"});
}

TEST(CacheLinks, AReRunLeavesOnlyWhatIsInstalledNow) {
  Fixture f;
  write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kA, 1, "img2gray"), f.entry("org/relu", kA, 1, "relu")});
  // img2gray upgraded to v2 at commit B, relu uninstalled.
  const auto change = write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kB, 2, "img2gray")});
  EXPECT_EQ(change.removed, std::vector<std::string>{"org/relu"});
  const fs::path repo = f.folder("kernels--org--img2gray");
  EXPECT_FALSE(fs::exists(repo / "refs" / "v1"));
  EXPECT_EQ(slurp(repo / "refs" / "v2"), kB);
  EXPECT_FALSE(fs::exists(fs::symlink_status(repo / "snapshots" / kA)));
  EXPECT_FALSE(fs::exists(f.folder("kernels--org--relu")));
  EXPECT_TRUE(fs::exists(f.site / "relu" / "metadata.json"));  // the link went, never what it pointed at
}

TEST(CacheLinks, AnotherEnvironmentsLinksAndForeignFoldersAreLeftAlone) {
  Fixture f;
  write_cache_links(f.cache, "/other-env", {f.entry("org/relu", kA, 1, "relu")});
  write_file(f.folder("kernels--org--img2gray") / "refs" / "v1", kB);  // a real Hub download
  const auto change = write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kA, 1, "img2gray")});
  ASSERT_EQ(change.refused.size(), 1u);
  EXPECT_EQ(change.refused[0].repo_id, "org/img2gray");
  EXPECT_NE(change.refused[0].why.find("not made by kwheel link"), std::string::npos);
  EXPECT_EQ(slurp(f.folder("kernels--org--img2gray") / "refs" / "v1"), kB);
  EXPECT_TRUE(change.removed.empty());
  EXPECT_TRUE(fs::exists(f.folder("kernels--org--relu") / "refs" / "v1"));
}

TEST(CacheLinks, OneVersionNamingTwoCommitsIsRefusedAndItsOldLinksGo) {
  Fixture f;
  write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kA, 1, "img2gray")});
  const auto change = write_cache_links(f.cache, "/env", {f.entry("org/img2gray", kA, 1, "img2gray"), f.entry("org/img2gray", kB, 1, "relu")});
  ASSERT_EQ(change.refused.size(), 1u);
  EXPECT_NE(change.refused[0].why.find("two commits"), std::string::npos);
  EXPECT_EQ(change.removed, std::vector<std::string>{"org/img2gray"});
  EXPECT_FALSE(fs::exists(f.folder("kernels--org--img2gray")));
}
