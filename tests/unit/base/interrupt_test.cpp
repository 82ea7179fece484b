#include "kwheel/base/interrupt.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "kwheel/base/temp_dir.hpp"

using namespace kwheel;
namespace fs = std::filesystem;

namespace {

// The grandchild outlives its parent only as an orphan; as the subreaper we
// adopt it and can wait for it, instead of polling /proc.
struct Subreaper {
  Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~Subreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

}  // namespace

// In a child process (the handler thread and the signal are process-wide):
// a scratch directory beside a target, a plain file with a libzip-style
// sibling, and a grandchild in its own process group, then SIGINT.
TEST(Interrupt, RemovesScratchKillsChildGroupsAndDiesOfTheSignal) {
  Subreaper adopt;
  // Not a TempDir: the forked child would inherit its registration and
  // remove it with the rest.
  std::string tmpl = (fs::temp_directory_path() / "interrupt-test-XXXXXX").string();
  ASSERT_TRUE(::mkdtemp(tmpl.data()));
  const fs::path dir = tmpl;
  const fs::path site = dir / "site", file = dir / "partial.whl";
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_interrupt_cleanup();
    TempDir scratch = TempDir::beside(site, "new");
    std::ofstream(scratch.path() / "big") << "data";
    std::ofstream(file) << "x";
    std::ofstream(file.string() + ".Ab12Cd") << "libzip's";
    RemoveOnInterrupt watch(file, true);
    const pid_t grandchild = ::fork();
    if (grandchild == 0) {
      ::setpgid(0, 0);
      ::pause();
      ::_exit(0);
    }
    ::setpgid(grandchild, grandchild);
    KillOnInterrupt kill(grandchild);
    const std::string msg = std::to_string(grandchild) + " " + scratch.path().string();
    (void)!::write(ready[1], msg.data(), msg.size());
    ::close(ready[1]);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  char buf[4096] = {};
  ASSERT_GT(::read(ready[0], buf, sizeof buf - 1), 0);
  ::close(ready[0]);
  const std::string msg(buf);
  const pid_t grandchild = std::stoi(msg.substr(0, msg.find(' ')));
  const fs::path scratch = msg.substr(msg.find(' ') + 1);
  ASSERT_TRUE(fs::exists(scratch / "big"));

  ASSERT_EQ(::kill(child, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_FALSE(fs::exists(scratch));
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file.string() + ".Ab12Cd"));
  EXPECT_FALSE(fs::exists(dir / (".kwheel-owner-" + std::string(scratch_token(scratch.filename().string()).value_or("?")))));
  // SIGKILL, sent to its group before the child died.
  ASSERT_EQ(::waitpid(grandchild, &status, 0), grandchild);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  EXPECT_TRUE(left.empty()) << left.front();
  fs::remove_all(dir);
}

// The -o directories a run created go with the interrupt, innermost first,
// but only those left empty once the scratch is gone; one notice line
// follows on stderr.
TEST(Interrupt, RemovesTheDirectoriesTheRunCreatedIfEmptyAndSaysSo) {
  std::string tmpl = (fs::temp_directory_path() / "interrupt-dirs-XXXXXX").string();
  ASSERT_TRUE(::mkdtemp(tmpl.data()));
  const fs::path dir = tmpl;
  const fs::path outer = dir / "new", inner = outer / "dist", shared = dir / "shared";
  int ready[2], err[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(err), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::dup2(err[1], STDERR_FILENO);
    ::close(err[0]);
    install_interrupt_cleanup("kwheel");
    RemoveEmptyDirOnInterrupt outer_dir(outer), inner_dir(inner), shared_dir(shared);
    fs::create_directories(inner);
    fs::create_directories(shared);
    std::ofstream(inner / "partial.whl") << "x";
    RemoveOnInterrupt partial(inner / "partial.whl");
    std::ofstream(shared / "theirs.whl") << "another process's";  // not ours: keeps `shared`
    (void)!::write(ready[1], "r", 1);
    ::close(ready[1]);
    for (;;) ::pause();
  }
  ::close(ready[1]);
  ::close(err[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(::kill(child, SIGINT), 0);
  std::string said;
  char buf[256];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) said.append(buf, static_cast<size_t>(n));
  ::close(err[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  EXPECT_EQ(said, "kwheel: interrupted\n");  // a pipe, not a terminal: no line clearing
  EXPECT_FALSE(fs::exists(outer));
  EXPECT_TRUE(fs::exists(shared / "theirs.whl"));
  fs::remove_all(dir);
}
