// UniqueFd owns a descriptor: closed when its owner goes, handed over (not
// duplicated, not closed) by a move. Whether a descriptor number is open is
// asked of the kernel: fcntl(F_GETFD) fails with EBADF on a closed one.
#include "kwheel/base/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <utility>

using namespace kwheel;

namespace {

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

int open_null() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  return fd;
}

}  // namespace

TEST(UniqueFd, ClosesOnDestruction) {
  int raw = -1;
  {
    const UniqueFd fd(open_null());
    raw = fd.get();
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(UniqueFd, DefaultAndResetHoldNone) {
  UniqueFd none;
  EXPECT_EQ(none.get(), -1);
  UniqueFd fd(open_null());
  const int raw = fd.get();
  fd.reset();
  EXPECT_EQ(fd.get(), -1);
  EXPECT_FALSE(is_open(raw));
  fd.reset();  // twice is harmless
}

TEST(UniqueFd, MoveHandsTheDescriptorOver) {
  UniqueFd a(open_null());
  const int raw = a.get();
  {
    UniqueFd b(std::move(a));
    EXPECT_EQ(b.get(), raw);
    EXPECT_EQ(a.get(), -1);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));  // closed once, by its new owner
}

TEST(UniqueFd, MoveAssignmentClosesWhatItHeld) {
  UniqueFd a(open_null());
  UniqueFd b(open_null());
  const int raw_a = a.get(), raw_b = b.get();
  b = std::move(a);
  EXPECT_FALSE(is_open(raw_b));
  EXPECT_EQ(b.get(), raw_a);
  EXPECT_EQ(a.get(), -1);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(is_open(raw_a));
}
