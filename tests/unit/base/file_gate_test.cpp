#include "kwheel/base/file_gate.hpp"

#include <gtest/gtest.h>

#include <future>
#include <stdexcept>

#include "kwheel/base/error.hpp"

using namespace kwheel;

// Each waiter runs on its own thread; the main thread releases files and
// observes, through the futures, who has been let through. No timing: a
// waiter that must still be blocked is checked after a later waiter that
// shares the event has returned.

TEST(FileGate, PathsNotPendingAreReady) {
  FileGate gate;
  gate.set_pending({"a"});
  gate.wait({"b", "c"});  // returns at once
  SUCCEED();
}

TEST(FileGate, WaiterReturnsOnlyWhenAllItsPathsAreReady) {
  FileGate gate;
  gate.set_pending({"a", "b"});
  auto both = std::async(std::launch::async, [&] { gate.wait({"a", "b"}); });
  auto only_a = std::async(std::launch::async, [&] { gate.wait({"a"}); });
  gate.mark_ready("a");
  only_a.get();  // released by the same notification as `both` saw
  EXPECT_EQ(both.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  gate.mark_ready("b");
  both.get();
}

TEST(FileGate, FailureWakesEveryWaiterWithTheError) {
  FileGate gate;
  gate.set_pending({"a"});
  auto w1 = std::async(std::launch::async, [&] { gate.wait({"a"}); });
  auto w2 = std::async(std::launch::async, [&] { gate.wait({"a"}); });
  gate.fail(std::make_exception_ptr(Error(ErrorKind::network, "download of 'a' failed")));
  for (auto* w : {&w1, &w2}) {
    try {
      w->get();
      FAIL() << "expected the download's error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::network);
      EXPECT_STREQ(e.what(), "download of 'a' failed");
    }
  }
  EXPECT_THROW(gate.wait({"unrelated"}), Error);  // later waiters too
}

TEST(FileGate, OpenAllReleasesWhatNeverArrived) {
  FileGate gate;
  gate.set_pending({"a", "b"});
  auto w = std::async(std::launch::async, [&] { gate.wait({"a", "b"}); });
  gate.open_all();
  w.get();
}
