#include "kwheel/base/scratch_owner.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kwheel/base/atomic_file.hpp"
#include "kwheel/base/temp_dir.hpp"
#include "test_support.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

// Another owner, alive: a lock file held through its own open file
// description, exactly as another process (in any PID namespace) holds it.
class HeldLock {
 public:
  HeldLock(const fs::path& dir, const std::string& token) : fd_(::open((dir / (".kwheel-owner-" + token)).c_str(), O_RDWR | O_CREAT, 0644)) {
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::flock(fd_, LOCK_EX | LOCK_NB), 0);
  }
  ~HeldLock() { ::close(fd_); }

 private:
  int fd_;
};

void touch(const fs::path& p) { std::ofstream(p) << "x"; }

// Held by someone through another open file description than the caller's?
bool lock_is_held(const fs::path& lock) {
  int fd = ::open(lock.c_str(), O_RDONLY);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
  ::close(fd);
  return held;
}

// A lease that waits on this process's own lock waits forever, holding the
// lease table's mutex, so every later test would hang behind it. Dropping
// the lock through whichever descriptor of ours holds it lets the stuck
// acquisition finish and the suite go on to report the failure.
void unstick(const fs::path& lock) {
  const fs::path target = fs::canonical(lock);
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (fs::read_symlink(e.path(), ec) == target) ::flock(std::stoi(e.path().filename().string()), LOCK_UN);
  }
}

// Runs `make` (which takes a lease) on another thread and waits a bounded
// time for it, so that a self-deadlock fails the test instead of hanging it.
template <class T, class Make>
std::unique_ptr<T> within_bound(Make make, const fs::path& lock, const std::string& what) {
  auto task = std::make_shared<std::packaged_task<std::unique_ptr<T>()>>(std::move(make));
  auto done = task->get_future();
  std::thread([task] { (*task)(); }).detach();  // a joined thread would hang with it
  if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << what << " waited on this process's own lock " << lock;
    unstick(lock);
    if (done.wait_for(std::chrono::seconds(10)) != std::future_status::ready) std::abort();  // cannot go on
  }
  return done.get();
}

// The same directory, spelled every way a caller might: as given, through a
// "..", with a ".", relative to the working directory, through a symlink.
std::vector<fs::path> other_spellings(const fs::path& dir, const fs::path& link) {
  fs::create_directories(dir / "sub");
  fs::create_directory_symlink(dir, link);
  return {dir / "sub" / "..", dir / ".", fs::relative(dir, fs::current_path()), link};
}

}  // namespace

TEST(ScratchToken, ReadsOnlyOurNames) {
  EXPECT_EQ(scratch_token(".a.whl.kwheel-tmp-0123456789abcdef-7"), "0123456789abcdef");
  EXPECT_EQ(scratch_token(".site.kwheel-new-fedcba9876543210-Ab12Cd"), "fedcba9876543210");
  EXPECT_EQ(scratch_token(".site.kwheel-new-fedcba9876543210-Ab12Cd.old"), "fedcba9876543210");
  EXPECT_EQ(scratch_token("kwheel-validate-00000000000000ff-xYz123"), "00000000000000ff");
  EXPECT_EQ(scratch_token(".kwheel-owner-0123456789abcdef"), "0123456789abcdef");
  // Not ours, or not provably: PIDs (the old scheme), kept environments,
  // short or upper-case tokens, user files that merely mention kwheel.
  EXPECT_EQ(scratch_token(".a.whl.kwheel-tmp-12345-0"), std::nullopt);
  EXPECT_EQ(scratch_token("kwheel-validate-kept-xYz123"), std::nullopt);
  EXPECT_EQ(scratch_token(".a.kwheel-tmp-0123456789ABCDEF-1"), std::nullopt);
  EXPECT_EQ(scratch_token(".a.kwheel-tmp-0123456789abcde-1"), std::nullopt);
  EXPECT_EQ(scratch_token("kwheel-0.1.0-py3-none-any.whl"), std::nullopt);
  EXPECT_EQ(scratch_token(".kwheel-owner-0123456789abcdef.bak"), std::nullopt);
}

TEST(SweepStaleScratch, RemovesWhatDeadOwnersLeftAndKeepsTheLiving) {
  TempDir t("unit");
  const fs::path d = t.path();
  const std::string dead = "1111111111111111", gone = "2222222222222222", live = "3333333333333333";
  touch(d / (".a.whl.kwheel-tmp-" + dead + "-0"));
  touch(d / (".a.whl.kwheel-tmp-" + dead + "-0.Xy12Zz"));  // libzip's own temp beside ours
  touch(d / (".kwheel-owner-" + dead));                    // unlocked: its process died
  fs::create_directories(d / (".site.kwheel-new-" + gone + "-abcdef") / "files");
  touch(d / (".site.kwheel-new-" + gone + "-abcdef") / "files" / "w.whl");  // no lock file at all
  touch(d / (".b.whl.kwheel-tmp-" + live + "-3"));
  HeldLock alive(d, live);
  touch(d / "user.txt");
  touch(d / ".a.whl.kwheel-tmp-12345-0");  // a PID proves nothing: left alone

  sweep_stale_scratch(d);

  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{".b.whl.kwheel-tmp-" + live + "-3", ".kwheel-owner-" + live, "user.txt", ".a.whl.kwheel-tmp-12345-0"}));
}

TEST(OwnerLease, HoldsOneLockPerDirectoryAndRemovesItWithTheLastLease) {
  TempDir t("unit");
  const fs::path lock = t.path() / (".kwheel-owner-" + OwnerLease::token());
  {
    OwnerLease a(t.path());
    EXPECT_TRUE(fs::exists(lock));
    {
      OwnerLease b(t.path());
      // Held: a second open file description cannot take it.
      int fd = ::open(lock.c_str(), O_RDONLY);
      ASSERT_GE(fd, 0);
      EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
      ::close(fd);
    }
    EXPECT_TRUE(fs::exists(lock));  // `a` still holds it
    sweep_stale_scratch(t.path());  // another run's sweep leaves a live lock alone
    EXPECT_TRUE(fs::exists(lock));
  }
  EXPECT_FALSE(fs::exists(lock));
  EXPECT_TRUE(OwnerLease::stem("tmp").starts_with("kwheel-tmp-" + OwnerLease::token() + "-"));
}

TEST(TempDir, NamesCarryTheOwnerAndKeepDropsIt) {
  TempDir t("unit");
  EXPECT_EQ(scratch_token(t.path().filename().string()), OwnerLease::token());
  const fs::path site = t.path() / "site";
  TempDir beside = TempDir::beside(site, "new");
  EXPECT_EQ(beside.path().parent_path(), t.path());
  EXPECT_TRUE(beside.path().filename().string().starts_with(".site.kwheel-new-" + OwnerLease::token() + "-"));
  fs::path kept;
  {
    TempDir k("unit");
    k.keep();
    kept = k.path();
  }
  EXPECT_TRUE(fs::is_directory(kept));
  EXPECT_TRUE(kept.filename().string().starts_with("kwheel-unit-kept-")) << kept;
  EXPECT_EQ(scratch_token(kept.filename().string()), std::nullopt);  // no sweep takes it
  fs::remove_all(kept);
}

TEST(TempDir, TheFirstScratchInADirectorySweepsWhatKilledRunsLeft) {
  std::string tmpl = (fs::temp_directory_path() / "sweep-test-XXXXXX").string();
  ASSERT_TRUE(::mkdtemp(tmpl.data()));
  const fs::path tmpdir = tmpl;
  // A validate killed with SIGKILL: its environment, and no live owner.
  const fs::path stale = tmpdir / "kwheel-validate-1111111111111111-AbCdEf";
  fs::create_directories(stale / "env" / "bin");
  touch(stale / "env" / "bin" / "python");
  touch(tmpdir / ".kwheel-owner-1111111111111111");
  const fs::path kept = tmpdir / "kwheel-validate-kept-AbCdEf";  // --keep-env: the user's now
  fs::create_directories(kept);
  {
    kwheel::testing::ScopedEnv env("TMPDIR", tmpdir.c_str());
    TempDir t("unit");
    EXPECT_FALSE(fs::exists(stale));
    EXPECT_FALSE(fs::exists(tmpdir / ".kwheel-owner-1111111111111111"));
    EXPECT_TRUE(fs::exists(kept));
  }
  fs::remove_all(tmpdir);
}

TEST(OwnerLease, OneDirectorySpelledTwoWaysSharesOneLock) {
  TempDir t("unit");
  TempDir links("unit");
  const fs::path lock = t.path() / (".kwheel-owner-" + OwnerLease::token());
  for (const fs::path& spelling : other_spellings(t.path(), links.path() / "link")) {
    SCOPED_TRACE(spelling.string());
    auto first = std::make_unique<OwnerLease>(t.path());
    auto second = within_bound<OwnerLease>([spelling] { return std::make_unique<OwnerLease>(spelling); }, lock, "a lease on " + spelling.string());
    first.reset();
    // One lock, shared: the other spelling's lease still holds it.
    EXPECT_TRUE(fs::exists(lock));
    EXPECT_TRUE(lock_is_held(lock));
    second.reset();
    EXPECT_FALSE(fs::exists(lock));
  }
}

TEST(TempPath, TwoLiveTempsInOneDirectorySpelledTwoWaysDoNotDeadlock) {
  TempDir t("unit");
  const fs::path lock = t.path() / (".kwheel-owner-" + OwnerLease::token());
  fs::create_directories(t.path() / "sub");
  TempPath a(t.path() / "a.whl");
  auto b = within_bound<TempPath>([&t] { return std::make_unique<TempPath>(t.path() / "sub" / ".." / "b.whl"); }, lock,
                                  "a second temp file");
  std::ofstream(b->path()) << "b";
  b->commit();
  EXPECT_TRUE(fs::exists(t.path() / "b.whl"));
  EXPECT_TRUE(lock_is_held(lock));  // `a` is still live there
}
