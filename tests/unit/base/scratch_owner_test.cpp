#include "kwheel/base/scratch_owner.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
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
  EXPECT_EQ(scratch_token(".a.whl.kwheel-tmp-0123456789abcdef-7.Xy12Zz"), "0123456789abcdef");  // libzip's
  EXPECT_EQ(scratch_token(".site.kwheel-new-fedcba9876543210-Ab12Cd"), "fedcba9876543210");
  EXPECT_EQ(scratch_token(".site.kwheel-new-fedcba9876543210-Ab12Cd.old"), "fedcba9876543210");
  EXPECT_EQ(scratch_token("kwheel-validate-00000000000000ff-xYz123"), "00000000000000ff");
  EXPECT_EQ(scratch_token("kwheel-pin-wheel-00000000000000ff-xYz123"), "00000000000000ff");
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

TEST(ScratchToken, TheWholeNameMustBeOneKwheelMakes) {
  // The probe's names: each contains "kwheel-<letters>-<16 hex>-".
  for (const char* name : {"ci-kwheel-build-3af4e79c0ffee123-log.txt", "kwheel-build-3af4e79c0ffee123-log.txt",
                           "kwheel-build-3af4e79c0ffee123-", "kwheel-build-3af4e79c0ffee123-AbCdEf.txt",
                           "xkwheel-build-3af4e79c0ffee123-AbCdEf", "kwheel--3af4e79c0ffee123-AbCdEf",
                           "kwheel-Build-3af4e79c0ffee123-AbCdEf", "kwheel-build-3af4e79c0ffee123-AbCdE",
                           ".kwheel-new-3af4e79c0ffee123-AbCdEf",             // beside, but no leaf
                           "a.kwheel-new-3af4e79c0ffee123-AbCdEf",            // a leaf without its dot
                           ".a.kwheel-new-3af4e79c0ffee123-AbCdEf.bak",       // only ".old" follows a swapped site
                           ".a.kwheel-new-3af4e79c0ffee123-AbCdEf.old.old",
                           ".a.kwheel-tmp-3af4e79c0ffee123-01",               // no counter has a leading zero
                           ".a.kwheel-tmp-3af4e79c0ffee123-1.AbCdEfG",        // libzip draws six
                           ".a.kwheel-tmp-3af4e79c0ffee123-1.log",
                           ".a.kwheel-build-3af4e79c0ffee123-1",              // only TempPath counts, as "tmp"
                           "notes-about-.kwheel-owner-3af4e79c0ffee123", ".kwheel-owner-3af4e79c0ffee12"})
    EXPECT_EQ(scratch_token(name), std::nullopt) << name;
}

TEST(ScratchToken, EachNameSaysWhatKwheelMadeUnderIt) {
  const auto lock = parse_scratch_name(".kwheel-owner-0123456789abcdef");
  ASSERT_TRUE(lock);
  EXPECT_TRUE(lock->lock && lock->may_be_file && !lock->may_be_directory);
  const auto temp = parse_scratch_name(".a.whl.kwheel-tmp-0123456789abcdef-7");
  ASSERT_TRUE(temp);
  EXPECT_TRUE(temp->may_be_file && !temp->may_be_directory && !temp->lock);
  const auto dir = parse_scratch_name("kwheel-validate-0123456789abcdef-AbCdEf");
  ASSERT_TRUE(dir);
  EXPECT_TRUE(dir->may_be_directory && !dir->may_be_file);
}

TEST(SweepStaleScratch, RemovesWhatDeadOwnersLeftAndKeepsTheLiving) {
  TempDir t("unit");
  const fs::path d = t.path();
  const std::string dead = "1111111111111111", gone = "2222222222222222", live = "3333333333333333";
  touch(d / (".a.whl.kwheel-tmp-" + dead + "-0"));
  touch(d / (".a.whl.kwheel-tmp-" + dead + "-0.Xy12Zz"));  // libzip's own temp beside ours
  fs::create_directories(d / (".site.kwheel-new-" + dead + "-abcdef") / "files");
  std::ofstream(d / (".kwheel-owner-" + dead));            // unlocked: its process died
  // No lock file at all: kwheel makes one before any scratch, so this is not
  // provably ours, whatever its name.
  fs::create_directories(d / (".site.kwheel-new-" + gone + "-abcdef") / "files");
  touch(d / (".b.whl.kwheel-tmp-" + live + "-3"));
  HeldLock alive(d, live);
  touch(d / "user.txt");
  touch(d / ".a.whl.kwheel-tmp-12345-0");  // a PID proves nothing: left alone

  sweep_stale_scratch(d);

  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{".b.whl.kwheel-tmp-" + live + "-3", ".kwheel-owner-" + live, "user.txt",
                                         ".a.whl.kwheel-tmp-12345-0", ".site.kwheel-new-" + gone + "-abcdef"}));
}

TEST(SweepStaleScratch, LeavesWhatKwheelDidNotMakeUnderADeadOwnersName) {
  TempDir t("unit");
  TempDir elsewhere("unit");
  const fs::path d = t.path();
  const std::string dead = "4444444444444444";
  std::ofstream(d / (".kwheel-owner-" + dead));  // a dead owner: its real scratch would go
  const fs::path target = elsewhere.path() / "precious";
  fs::create_directories(target);
  touch(target / "data");
  // Named exactly like scratch, but not what kwheel makes under that name.
  fs::create_directory_symlink(target, d / ("kwheel-validate-" + dead + "-AbCdEf"));     // a symlink to a directory
  fs::create_symlink(target / "data", d / (".a.whl.kwheel-tmp-" + dead + "-1"));        // a symlink to a file
  fs::create_directories(d / (".a.whl.kwheel-tmp-" + dead + "-2"));                    // a directory where a file is made
  touch(d / ("kwheel-validate-" + dead + "-XyZ123"));                                    // a file where a directory is made
  ::mkfifo((d / (".a.whl.kwheel-tmp-" + dead + "-3")).c_str(), 0600);                   // neither
  touch(d / ("ci-kwheel-build-" + dead + "-log.txt"));                                   // merely contains the stem
  fs::create_directories(d / ("kwheel-build-" + dead + "-logs"));
  touch(d / (".a.whl.kwheel-tmp-" + dead + "-4"));                                       // genuinely stale: goes

  sweep_stale_scratch(d);

  std::set<std::string> left;
  for (const auto& e : fs::directory_iterator(d)) left.insert(e.path().filename().string());
  EXPECT_EQ(left, (std::set<std::string>{"kwheel-validate-" + dead + "-AbCdEf", ".a.whl.kwheel-tmp-" + dead + "-1",
                                         ".a.whl.kwheel-tmp-" + dead + "-2", "kwheel-validate-" + dead + "-XyZ123",
                                         ".a.whl.kwheel-tmp-" + dead + "-3", "ci-kwheel-build-" + dead + "-log.txt",
                                         "kwheel-build-" + dead + "-logs"}));
  EXPECT_TRUE(fs::exists(target / "data"));
}

TEST(SweepStaleScratch, ALockFileThatIsNotOneKwheelMadeProvesNothing) {
  TempDir t("unit");
  TempDir elsewhere("unit");
  const fs::path d = t.path();
  const std::string link = "5555555555555555", full = "6666666666666666";
  touch(elsewhere.path() / "lock");
  fs::create_symlink(elsewhere.path() / "lock", d / (".kwheel-owner-" + link));  // kwheel's lock is never a symlink
  touch(d / (".a.whl.kwheel-tmp-" + link + "-0"));
  touch(d / (".kwheel-owner-" + full));  // kwheel's lock is never written to
  touch(d / (".a.whl.kwheel-tmp-" + full + "-0"));

  sweep_stale_scratch(d);

  for (const std::string& token : {link, full}) {
    EXPECT_TRUE(fs::exists(d / (".a.whl.kwheel-tmp-" + token + "-0"))) << token;
    EXPECT_TRUE(fs::is_symlink(d / (".kwheel-owner-" + token)) || fs::exists(d / (".kwheel-owner-" + token))) << token;
  }
}

TEST(SweepStaleScratch, AnotherUsersScratchIsLeftAlone) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another uid";
  TempDir t("unit");
  const fs::path d = t.path();
  const std::string theirs = "7777777777777777", mine = "8888888888888888";
  // Their lock is theirs: nothing of the token goes.
  std::ofstream(d / (".kwheel-owner-" + theirs));
  touch(d / (".a.whl.kwheel-tmp-" + theirs + "-0"));
  // My dead lock, but an entry of another uid under my token.
  std::ofstream(d / (".kwheel-owner-" + mine));
  touch(d / (".a.whl.kwheel-tmp-" + mine + "-0"));
  touch(d / (".a.whl.kwheel-tmp-" + mine + "-1"));
  for (const std::string& name : {".kwheel-owner-" + theirs, ".a.whl.kwheel-tmp-" + theirs + "-0", ".a.whl.kwheel-tmp-" + mine + "-0"})
    ASSERT_EQ(::lchown((d / name).c_str(), 4242, 4242), 0) << name;

  sweep_stale_scratch(d);

  EXPECT_TRUE(fs::exists(d / (".kwheel-owner-" + theirs)));
  EXPECT_TRUE(fs::exists(d / (".a.whl.kwheel-tmp-" + theirs + "-0")));
  EXPECT_TRUE(fs::exists(d / (".a.whl.kwheel-tmp-" + mine + "-0")));
  EXPECT_FALSE(fs::exists(d / (".a.whl.kwheel-tmp-" + mine + "-1")));  // mine, and its owner is dead
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
  std::ofstream(tmpdir / ".kwheel-owner-1111111111111111");  // empty, as kwheel leaves it
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
