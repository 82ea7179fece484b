// ByteBudget: the bytes held over all threads never exceed the capacity,
// turns are taken in order, a reservation over the capacity fails at once
// instead of waiting forever, and a thread cannot hold two (the way two
// threads would wait on each other). Synchronisation is by latches and
// joins, never by sleeping.
#include "kwheel/base/byte_budget.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace kwheel;

TEST(ByteBudget, HeldBytesNeverExceedTheCapacity) {
  ByteBudget budget(100);
  std::atomic<std::uint64_t> held{0}, most{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          const std::uint64_t want = 10 + 13 * static_cast<std::uint64_t>((t + i) % 7);  // 10 .. 88
          const auto r = budget.reserve(want, "a test task");
          const std::uint64_t now = held += want;
          for (std::uint64_t m = most; now > m && !most.compare_exchange_weak(m, now);) {}
          held -= want;
        }
      });
    }
  }
  EXPECT_LE(most.load(), 100u);
  EXPECT_LE(budget.peak_held(), 100u);
  EXPECT_GT(budget.peak_held(), 0u);
}

TEST(ByteBudget, AReservationOverTheCapacityFailsAtOnceNamingItself) {
  ByteBudget budget(1000);
  try {
    budget.reserve(1001, "decoding 'x.so'");
    FAIL() << "reserved more than the capacity";
  } catch (const std::length_error& e) {
    EXPECT_STREQ(e.what(), "decoding 'x.so' needs 1001 bytes, more than the 1000 bytes all threads may hold together");
  }
  // Even while another thread holds everything: refused, not queued.
  const auto all = budget.reserve(1000, "the first");
  std::jthread t([&] { EXPECT_THROW(budget.reserve(5000, "the second"), std::length_error); });
}

TEST(ByteBudget, AThreadHoldingAReservationCannotWaitForAnother) {
  ByteBudget a(100), b(100);
  const auto held = a.reserve(60, "first");
  EXPECT_THROW(a.reserve(10, "second"), std::logic_error);
  EXPECT_THROW(b.reserve(10, "another budget's"), std::logic_error);
}

TEST(ByteBudget, TurnsAreTakenInOrderSoALargeReservationIsNotStarved) {
  ByteBudget budget(100);
  auto first = std::make_unique<ByteBudget::Reservation>(budget.reserve(30, "first"));
  std::atomic<int> order{0};
  int big_turn = 0, small_turn = 0;
  std::jthread big([&] {
    const auto r = budget.reserve(100, "big");
    big_turn = ++order;
  });
  while (budget.waiting() < 1) std::this_thread::yield();
  // 70 bytes are free, enough for 10, but the big one asked first.
  std::jthread small([&] {
    const auto r = budget.reserve(10, "small");
    small_turn = ++order;
  });
  while (budget.waiting() < 2) std::this_thread::yield();
  EXPECT_EQ(order.load(), 0);
  first.reset();
  big.join();
  small.join();
  EXPECT_EQ(big_turn, 1);
  EXPECT_EQ(small_turn, 2);
}
