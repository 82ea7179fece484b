// WorkPool and OrderedTasks: results come back in submission order whatever
// order the workers finish in, exceptions reach the submitter, the slot
// budget bounds the work in flight over every user at once, and users that
// fail or stop early give their slots back. Synchronisation is by latches
// and futures, never by sleeping.
#include "kwheel/base/work_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <set>
#include <stdexcept>
#include <thread>

using namespace kwheel;

TEST(WorkPool, ResultsComeBackInSubmissionOrder) {
  WorkPool pool(4, 64);
  OrderedTasks<int> tasks(pool);
  // The first task cannot finish before the last one has run, so the
  // workers finish out of order; pop() must still give 0, 1, 2, ...
  std::latch last_ran(1);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(tasks.reserve());
    tasks.submit([i, &last_ran](unsigned) {
      if (i == 0) last_ran.wait();
      if (i == 19) last_ran.count_down();
      return i;
    });
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(tasks.pop(), i);
  EXPECT_TRUE(tasks.empty());
}

TEST(WorkPool, TaskExceptionsReachTheSubmitter) {
  WorkPool pool(2);
  OrderedTasks<int> tasks(pool);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(tasks.reserve());
    tasks.submit([i](unsigned) -> int {
      if (i == 1) throw std::runtime_error("chunk 1 failed");
      return i;
    });
  }
  EXPECT_EQ(tasks.pop(), 0);
  try {
    tasks.pop();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "chunk 1 failed");
  }
  EXPECT_EQ(tasks.pop(), 2);  // the pool goes on serving
}

TEST(WorkPool, WorkerIndexesAreDistinctAndInRange) {
  WorkPool pool(3, 3);
  EXPECT_EQ(pool.workers(), 3u);
  // Three tasks that all wait for each other must run on three workers at once.
  std::latch all_running(3);
  OrderedTasks<unsigned> tasks(pool);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(tasks.reserve());
    tasks.submit([&](unsigned w) {
      all_running.arrive_and_wait();
      return w;
    });
  }
  std::set<unsigned> seen;
  for (int i = 0; i < 3; ++i) seen.insert(tasks.pop());
  EXPECT_EQ(seen, (std::set<unsigned>{0, 1, 2}));
}

TEST(WorkPool, SlotBudgetBoundsWorkInFlightOverAllUsers) {
  // Eight users push 200 tasks each through a budget of 5 slots. No more
  // than 5 tasks may ever be reserved or running at once, every user
  // finishes (a user holding slots never blocks for another), and all
  // slots come back.
  WorkPool pool(4, 5);
  std::atomic<int> in_task{0}, most_in_task{0};
  std::vector<std::thread> users;
  std::atomic<long> total{0};
  for (int u = 0; u < 8; ++u)
    users.emplace_back([&] {
      OrderedTasks<int> tasks(pool);
      for (int i = 0; i < 200;) {
        if (!tasks.reserve()) {
          total += tasks.pop();
          continue;
        }
        tasks.submit([&, i](unsigned) {
          int now = ++in_task;
          for (int seen = most_in_task; now > seen && !most_in_task.compare_exchange_weak(seen, now);) {
          }
          --in_task;
          return i;
        });
        ++i;
      }
      while (!tasks.empty()) total += tasks.pop();
    });
  for (auto& t : users) t.join();
  EXPECT_EQ(total, 8L * (199 * 200 / 2));
  EXPECT_LE(pool.peak_slots_held(), 5u);
  EXPECT_GE(pool.peak_slots_held(), 2u);  // the users did overlap
  EXPECT_LE(most_in_task, 4);             // and never more tasks than workers ran
  // Every slot is free again: the whole budget can be taken at once.
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(pool.try_acquire_slot());
  EXPECT_FALSE(pool.try_acquire_slot());
  for (int i = 0; i < 5; ++i) pool.release_slot();
}

TEST(WorkPool, ReserveRefusesOnlyAUserThatHoldsWork) {
  WorkPool pool(1, 2);
  std::latch release(1);
  OrderedTasks<int> a(pool), b(pool);
  ASSERT_TRUE(a.reserve());
  a.submit([&](unsigned) {
    release.wait();
    return 1;
  });
  ASSERT_TRUE(a.reserve());
  a.submit([](unsigned) { return 2; });
  EXPECT_FALSE(a.reserve());  // budget spent, and `a` has results to take
  // `b` holds nothing: it waits for a slot, which `a` frees by popping.
  std::thread other([&] {
    ASSERT_TRUE(b.reserve());
    b.submit([](unsigned) { return 3; });
    EXPECT_EQ(b.pop(), 3);
  });
  release.count_down();
  EXPECT_EQ(a.pop(), 1);
  EXPECT_EQ(a.pop(), 2);
  other.join();
}

TEST(WorkPool, AUserThatStopsEarlyReturnsItsSlotsAndWaitsForItsTasks) {
  WorkPool pool(2, 4);
  std::atomic<int> finished{0};
  {
    OrderedTasks<int> tasks(pool);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(tasks.reserve());
      tasks.submit([&](unsigned) {
        ++finished;
        return 0;
      });
    }
    ASSERT_TRUE(tasks.reserve());  // reserved, never submitted: an error struck while filling
    // Leaving the scope (as an exception would) must not drop running tasks.
  }
  EXPECT_EQ(finished, 3);
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(pool.try_acquire_slot());
  for (int i = 0; i < 4; ++i) pool.release_slot();
}

TEST(WorkPool, ShutdownRunsQueuedTasksAndJoins) {
  std::atomic<int> ran{0};
  std::vector<std::future<void>> done;
  {
    WorkPool pool(2, 100);
    for (int i = 0; i < 50; ++i) done.push_back(pool.submit([&](unsigned) { ++ran; }));
  }
  EXPECT_EQ(ran, 50);
  for (auto& f : done) EXPECT_NO_THROW(f.get());
}

TEST(WorkPool, ZeroWorkersMeansOnePerCpu) {
  WorkPool pool(0);
  EXPECT_EQ(pool.workers(), std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(pool.slots(), 2 * pool.workers());
}
