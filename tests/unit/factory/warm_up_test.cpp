#include "kwheel/factory/warm_up.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kwheel/base/digest.hpp"
#include "kwheel/evidence/abi3.hpp"
#include "kwheel/evidence/manylinux_policy.hpp"

using namespace kwheel;

TEST(WarmUp, RunsItsTasksSideBySide) {
  // Each task waits for all of them to have started: done one after
  // another, the first would give up at its bound.
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  std::vector<bool> met(3, false);
  std::vector<WarmUp::Task> tasks;
  for (size_t i = 0; i < met.size(); ++i)
    tasks.push_back([&, i] {
      std::unique_lock lock(m);
      ++started;
      cv.notify_all();
      met[i] = cv.wait_for(lock, std::chrono::seconds(60), [&] { return started == 3; });
    });
  { const WarmUp warm_up(std::move(tasks)); }
  EXPECT_EQ(met, std::vector<bool>(3, true));
}

TEST(WarmUp, ATaskThatThrowsStopsNeitherTheOthersNorTheRun) {
  bool ran = false;
  {
    const WarmUp warm_up({[] { throw std::runtime_error("built-in data is broken"); }, [&] { ran = true; }});
  }
  EXPECT_TRUE(ran);
}

// Each test runs in a process of its own (gtest_discover_tests), so the
// built-ins start unparsed here, and the writers race the warm-up as they
// do in a run. Under the sanitizers' build, TSan watches that race.
TEST(WarmUp, WritersThatRaceItSeeOneCompleteCopyOfEachBuiltIn) {
  struct Seen {
    const PolicySet* policies = nullptr;
    const StableAbi* abi = nullptr;
    const TorchProvided* torch = nullptr;
    std::string digest;
  };
  std::vector<Seen> seen(6);
  {
    const WarmUp warm_up;
    std::vector<std::jthread> writers;
    for (auto& s : seen)
      writers.emplace_back([&s] {
        s.policies = &PolicySet::builtin();
        s.abi = &StableAbi::builtin();
        s.torch = &TorchProvided::builtin();
        s.digest = sha256_hex("abc");
      });
  }
  for (const auto& s : seen) {
    EXPECT_EQ(s.policies, &PolicySet::builtin());
    EXPECT_EQ(s.abi, &StableAbi::builtin());
    EXPECT_EQ(s.torch, &TorchProvided::builtin());
    EXPECT_EQ(s.digest, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // FIPS 180-2, B.1
  }
  ASSERT_NE(PolicySet::builtin().find("manylinux_2_28", "x86_64"), nullptr);
  EXPECT_NE(TorchProvided::builtin().match("libc10.so", "cuda"), nullptr);
}

TEST(WarmUp, WhatItLoadedIsTheBuiltInData) {
  { const WarmUp warm_up; }  // joined: each built-in is parsed by now
  const auto policies = PolicySet::builtin().for_arch("x86_64");
  ASSERT_GE(policies.size(), 3u);
  EXPECT_EQ(policies.back()->name, "linux");  // the base policy comes last
  EXPECT_EQ(PolicySet::builtin().find("manylinux2014", "x86_64"), PolicySet::builtin().find("manylinux_2_17", "x86_64"));
  EXPECT_TRUE(StableAbi::builtin().contains("PyObject_GetAttr"));
  EXPECT_EQ(StableAbi::builtin().python(), "3.9");
}
