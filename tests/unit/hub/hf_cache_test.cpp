// HfCache on a real directory: the layout huggingface_hub uses
// (file_download.py: repo_folder_name, _create_symlink,
// _cache_commit_hash_for_specific_revision; utils/_cache_manager.py), so a
// cache kwheel writes is one that huggingface_hub and `kernels` read.
#include "kwheel/hub/hf_cache.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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
using testing::slurp;

const std::string kCommit = "0123456789abcdef0123456789abcdef01234567";
const std::string kCommit2 = "fedcba9876543210fedcba9876543210fedcba98";
const std::string kEtag = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

TEST(HfCache, RepoFolderNamesFollowHuggingfaceHub) {
  // repo_folder_name: "{repo_type}s--{org}--{name}".
  EXPECT_EQ(HfCache("/c", "kernel", "kernels-community/activation").repo_dir(), fs::path("/c/kernels--kernels-community--activation"));
  EXPECT_EQ(HfCache("/c", "model", "julien-c/EsperBERTo-small").repo_dir(), fs::path("/c/models--julien-c--EsperBERTo-small"));
}

TEST(HfCache, BlobAndSnapshotPaths) {
  const HfCache c("/c", "kernel", "org/name");
  EXPECT_EQ(c.blob(kEtag), fs::path("/c/kernels--org--name/blobs/" + kEtag));
  EXPECT_EQ(c.incomplete(kEtag), fs::path("/c/kernels--org--name/blobs/" + kEtag + ".incomplete"));
  EXPECT_EQ(c.snapshot_dir(kCommit), fs::path("/c/kernels--org--name/snapshots/" + kCommit));
  EXPECT_EQ(c.snapshot_file(kCommit, "build/torch27-cxx11-cu126-x86_64-linux/x/__init__.py"),
            fs::path("/c/kernels--org--name/snapshots/" + kCommit + "/build/torch27-cxx11-cu126-x86_64-linux/x/__init__.py"));
}

TEST(HfCache, RefsAreWrittenAndReadBack) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  EXPECT_EQ(c.read_ref("main"), std::nullopt);
  c.write_ref("main", kCommit);
  // huggingface_hub writes the bare commit hash, no newline.
  EXPECT_EQ(slurp(c.repo_dir() / "refs" / "main"), kCommit);
  EXPECT_EQ(c.read_ref("main"), kCommit);
  c.write_ref("main", kCommit2);
  EXPECT_EQ(c.read_ref("main"), kCommit2);
  EXPECT_EQ(slurp(c.repo_dir() / "refs" / "main"), kCommit2);
}

TEST(HfCache, NestedRefsAreListed) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  c.write_ref("main", kCommit);
  c.write_ref("refs/pr/1", kCommit2);  // a PR revision, as huggingface_hub stores it
  EXPECT_EQ(slurp(c.repo_dir() / "refs" / "refs" / "pr" / "1"), kCommit2);
  auto refs = c.refs();
  std::sort(refs.begin(), refs.end());
  const std::vector<std::pair<std::string, std::string>> expected{{"main", kCommit}, {"refs/pr/1", kCommit2}};
  EXPECT_EQ(refs, expected);
  EXPECT_TRUE(HfCache(root.path(), "kernel", "org/other").refs().empty());
}

TEST(HfCache, RefWrittenByAnotherToolWithANewlineIsRead) {
  TempDir root("unit");
  const HfCache c(root.path(), "model", "org/name");
  put(c.repo_dir() / "refs" / "v1.0", kCommit + "\n");
  EXPECT_EQ(c.read_ref("v1.0"), kCommit);
}

TEST(HfCache, SnapshotsAreRelativeLinksIntoBlobs) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  put(c.blob(kEtag), "blob bytes");
  c.link_snapshot(kCommit, "README.md", kEtag);
  c.link_snapshot(kCommit, "build/v/pkg/__init__.py", kEtag);
  const fs::path top = c.snapshot_file(kCommit, "README.md");
  const fs::path deep = c.snapshot_file(kCommit, "build/v/pkg/__init__.py");
  ASSERT_TRUE(fs::is_symlink(top));
  ASSERT_TRUE(fs::is_symlink(deep));
  // os.path.relpath(blob, dirname(link)): relative, so the cache can move.
  EXPECT_EQ(fs::read_symlink(top), fs::path("../../blobs/" + kEtag));
  EXPECT_EQ(fs::read_symlink(deep), fs::path("../../../../../blobs/" + kEtag));
  EXPECT_EQ(slurp(top), "blob bytes");
  EXPECT_EQ(slurp(deep), "blob bytes");
}

TEST(HfCache, RelinkingPointsAtTheNewBlobAndLeavesNoTemp) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  const std::string other(64, 'a');
  put(c.blob(kEtag), "old");
  put(c.blob(other), "new");
  c.link_snapshot(kCommit, "f.py", kEtag);
  c.link_snapshot(kCommit, "f.py", kEtag);  // again: nothing changes
  EXPECT_EQ(slurp(c.snapshot_file(kCommit, "f.py")), "old");
  c.link_snapshot(kCommit, "f.py", other);
  EXPECT_EQ(slurp(c.snapshot_file(kCommit, "f.py")), "new");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(c.snapshot_dir(kCommit))) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"f.py"});
}

TEST(HfCache, UnsafeRefNamesAreRefused) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  for (const char* ref : {"../../../escape", "/etc/passwd", "", "a/./b", "a//b", "a\\b", "ma\nin"}) {
    const std::string msg = error_of([&] { c.write_ref(ref, kCommit); });
    EXPECT_NE(msg.find("ref"), std::string::npos) << msg;
    EXPECT_EQ(c.read_ref(ref), std::nullopt) << ref;
  }
  EXPECT_FALSE(fs::exists(root.path() / "escape"));
  EXPECT_FALSE(fs::exists(c.repo_dir() / "refs")) << "nothing written for a refused name";
}

TEST(HfCache, UnsafeCommitEtagAndPathNamesAreRefused) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  put(c.blob(kEtag), "x");
  error_of([&] { c.snapshot_dir("../../x"); });
  error_of([&] { c.snapshot_dir(""); });
  error_of([&] { c.blob("../snapshots/x"); });
  error_of([&] { c.lock_blob("../../../x"); });
  error_of([&] { c.snapshot_file(kCommit, "../../../../outside"); });
  error_of([&] { c.snapshot_file(kCommit, "/abs"); });
  error_of([&] { c.link_snapshot("..", "f.py", kEtag); });
  error_of([&] { c.link_snapshot(kCommit, "a/../../b", kEtag); });
  error_of([&] { c.save_listing("../x", nlohmann::json::array()); });
  error_of([&] { c.save_history_length("../x", 3); });
  EXPECT_FALSE(c.load_listing("../x").has_value());
  EXPECT_EQ(c.load_history_length("../x"), std::nullopt);
  EXPECT_FALSE(fs::exists(c.repo_dir() / "snapshots"));
}

TEST(HfCache, ListingsRoundTripBesideTheSnapshot) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  EXPECT_FALSE(c.load_listing(kCommit).has_value());
  const nlohmann::json listing = nlohmann::json::array(
      {{{"path", "build/v/a.so"}, {"size", 12}, {"oid", "abc"}, {"lfs", kEtag}}, {{"path", "README.md"}, {"size", 3}, {"oid", "def"}, {"lfs", nullptr}}});
  c.save_listing(kCommit, listing);
  const auto loaded = c.load_listing(kCommit);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(*loaded, listing);
  EXPECT_FALSE(fs::exists(c.snapshot_dir(kCommit))) << "kwheel's records stay out of the standard layout";
}

TEST(HfCache, AnUnchangedListingIsNotRewritten) {
  // A warm run saves the listing it just read back: the file must not be
  // replaced (a new inode is what write_file_atomic's rename leaves).
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  const fs::path file = c.repo_dir() / ".kwheel" / "listings" / (kCommit + ".json");
  const auto inode = [&] {
    struct stat st {};
    EXPECT_EQ(::stat(file.c_str(), &st), 0);
    return st.st_ino;
  };
  nlohmann::json listing = nlohmann::json::array({{{"path", "build/v/a.so"}, {"size", 12}, {"oid", "abc"}, {"lfs", kEtag}}});
  c.save_listing(kCommit, listing);
  const auto first = inode();
  c.save_listing(kCommit, listing);
  EXPECT_EQ(inode(), first) << "the same listing was written again";
  listing[0]["size"] = 13;
  c.save_listing(kCommit, listing);
  EXPECT_NE(inode(), first);
  EXPECT_EQ(c.load_listing(kCommit), listing);
  put(file, "damaged");
  c.save_listing(kCommit, listing);
  EXPECT_EQ(c.load_listing(kCommit), listing) << "a damaged listing is replaced";
}

TEST(HfCache, DamagedListingsAreNoListing) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  const fs::path file = c.repo_dir() / ".kwheel" / "listings" / (kCommit + ".json");
  for (const char* text : {"not json", "{}", "[{\"path\": \"a\"}]", "[{\"path\": \"a\", \"size\": -1, \"oid\": \"x\"}]",
                           "[{\"path\": \"a\", \"size\": 1, \"oid\": \"x\", \"lfs\": 3}]"}) {
    put(file, text);
    EXPECT_FALSE(c.load_listing(kCommit).has_value()) << text;
  }
}

TEST(HfCache, HistoryLengthsRoundTripAndDamageIsIgnored) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  EXPECT_EQ(c.load_history_length(kCommit), std::nullopt);
  c.save_history_length(kCommit, 4242);
  EXPECT_EQ(c.load_history_length(kCommit), 4242u);
  const fs::path file = c.repo_dir() / ".kwheel" / "history" / kCommit;
  for (const char* text : {"", "-3\n", "12a\n", "99999999999999999999\n"}) {
    put(file, text);
    EXPECT_EQ(c.load_history_length(kCommit), std::nullopt) << text;
  }
}

TEST(HfCache, BlobLockIsHuggingfaceHubsLockFileAndExclusive) {
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "org/name");
  // file_download.py: locks_dir / repo_folder_name / f"{etag}.lock".
  const fs::path lock_file = root.path() / ".locks" / "kernels--org--name" / (kEtag + ".lock");
  auto try_lock = [&] {
    const int fd = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    const bool got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    ::close(fd);
    return got;
  };
  {
    FileLock held = c.lock_blob(kEtag);
    ASSERT_TRUE(fs::exists(lock_file));
    EXPECT_FALSE(try_lock()) << "another writer must wait while the lock is held";
    FileLock moved(std::move(held));
    EXPECT_FALSE(try_lock()) << "moving the lock keeps it held";
  }
  EXPECT_TRUE(try_lock()) << "released on destruction";
}

// The strongest check of the layout: huggingface_hub itself scans a cache
// kwheel wrote (skipped where the project's .venv is not set up).
TEST(HfCache, HuggingfaceHubScansWhatKwheelWrote) {
  const fs::path python = fs::path(KWHEEL_SOURCE_DIR) / ".venv" / "bin" / "python";
  if (!fs::exists(python)) GTEST_SKIP() << "no .venv with huggingface_hub";
  TempDir root("unit");
  const HfCache c(root.path(), "kernel", "kernels-community/activation");
  put(c.blob(kEtag), "hello");
  c.link_snapshot(kCommit, "build/v/__init__.py", kEtag);
  c.write_ref("main", kCommit);
  TempDir elsewhere("unit");  // scan_cache_dir takes everything in the root for a repo
  const fs::path script = elsewhere.path() / "scan.py";
  put(script,
      "import sys\n"
      "from huggingface_hub import scan_cache_dir\n"
      "info = scan_cache_dir(sys.argv[1])\n"
      "assert not info.warnings, info.warnings\n"
      "for repo in info.repos:\n"
      "    for rev in repo.revisions:\n"
      "        for f in sorted(rev.files, key=lambda f: f.file_name):\n"
      "            print(repo.repo_type, repo.repo_id, rev.commit_hash, sorted(rev.refs), f.file_path.relative_to(rev.snapshot_path), f.size_on_disk)\n");
  const std::string cmd = python.string() + " " + script.string() + " " + (root.path() / "").string() + " 2>&1";
  std::string out;
  {
    std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), &::pclose);
    ASSERT_TRUE(p);
    char buf[512];
    while (size_t n = std::fread(buf, 1, sizeof buf, p.get())) out.append(buf, n);
  }
  EXPECT_EQ(out, "kernel kernels-community/activation " + kCommit + " ['main'] build/v/__init__.py 5\n");
}

}  // namespace
}  // namespace kwheel
