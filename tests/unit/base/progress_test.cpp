// Progress through its seam (a FILE* and a clock): what it draws, when it
// stays silent, and the ten-redraws-a-second limit, with time stepped by
// the test instead of slept.
#include "kwheel/base/progress.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace kwheel {
namespace {

using namespace std::chrono_literals;
using Clock = Progress::Clock;

// A FILE* whose contents a test can read back.
class Capture {
 public:
  Capture() : f_(std::tmpfile(), &std::fclose) {
    if (!f_) throw std::runtime_error("tmpfile failed");
  }
  std::FILE* get() const { return f_.get(); }
  std::string text() const {
    std::fflush(f_.get());
    std::rewind(f_.get());
    std::string out;
    for (int c; (c = std::fgetc(f_.get())) != EOF;) out.push_back(static_cast<char>(c));
    return out;
  }

 private:
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
};

// A steady clock that moves only when told to; far from the epoch, as a
// real steady clock is.
class FakeClock {
 public:
  Clock::time_point now() const { return Clock::time_point(std::chrono::nanoseconds(t_.load())); }
  void advance(std::chrono::nanoseconds d) { t_ += d.count(); }
  std::function<Clock::time_point()> fn() {
    return [this] { return now(); };
  }

 private:
  std::atomic<long long> t_{std::chrono::nanoseconds(1000s).count()};
};

constexpr uint64_t kMiB = 1024 * 1024;
// Erase-in-line after a carriage return: the line is redrawn in place
// (ECMA-48 "CSI K").
const std::string kRedraw = "\r\033[K";

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

TEST(Progress, DisabledWritesNothing) {
  Capture out;
  FakeClock clock;
  {
    Progress p(false, "downloading", out.get(), clock.fn());
    p.plan(3, 10 * kMiB);
    clock.advance(1s);
    p.add_bytes(kMiB);
    p.file_done();
    p.finish();
  }
  EXPECT_EQ(out.text(), "");
}

TEST(Progress, NothingDrawnMeansNoNewlineAtTheEnd) {
  Capture out;
  FakeClock clock;
  { Progress p(true, "downloading", out.get(), clock.fn()); }
  EXPECT_EQ(out.text(), "");
}

TEST(Progress, PlanDrawsTheLineAtOnce) {
  Capture out;
  FakeClock clock;
  Progress p(true, "downloading", out.get(), clock.fn());
  p.plan(2, 2 * kMiB);
  const std::string text = out.text();
  EXPECT_TRUE(text.starts_with(kRedraw)) << text;
  EXPECT_NE(text.find("downloading 0/2 files"), std::string::npos) << text;
  EXPECT_NE(text.find("0.0/2.0 MiB"), std::string::npos) << text;
  EXPECT_EQ(text.find('\n'), std::string::npos) << "an unfinished line has no newline";
}

TEST(Progress, CountsBytesFilesAndRate) {
  Capture out;
  FakeClock clock;
  Progress p(true, "uploading", out.get(), clock.fn());
  p.plan(2, 4 * kMiB);
  clock.advance(2s);
  p.add_bytes(3 * kMiB);  // 3 MiB in 2 s
  std::string text = out.text();
  const std::string last = text.substr(text.rfind(kRedraw));
  EXPECT_NE(last.find("uploading 0/2 files"), std::string::npos) << last;
  EXPECT_NE(last.find("3.0/4.0 MiB"), std::string::npos) << last;
  EXPECT_NE(last.find("1.5 MiB/s"), std::string::npos) << last;
}

TEST(Progress, PlansAddUp) {
  Capture out;
  FakeClock clock;
  Progress p(true, "downloading", out.get(), clock.fn());
  p.plan(1, kMiB);
  p.plan(2, 3 * kMiB);
  const std::string text = out.text();
  const std::string last = text.substr(text.rfind(kRedraw));
  EXPECT_NE(last.find("0/3 files"), std::string::npos) << last;
  EXPECT_NE(last.find("0.0/4.0 MiB"), std::string::npos) << last;
}

TEST(Progress, RedrawsAtMostTenTimesASecond) {
  Capture out;
  FakeClock clock;
  Progress p(true, "downloading", out.get(), clock.fn());
  p.plan(100, 100 * kMiB);
  ASSERT_EQ(count(out.text(), kRedraw), 1u);
  // Within 100 ms of the last draw: counted, not drawn.
  for (int i = 0; i < 9; ++i) {
    clock.advance(10ms);
    p.add_bytes(kMiB);
    p.file_done();
  }
  EXPECT_EQ(count(out.text(), kRedraw), 1u);
  // 100 ms after the last draw the next update draws, with everything so far.
  clock.advance(10ms);
  p.add_bytes(kMiB);
  std::string text = out.text();
  EXPECT_EQ(count(text, kRedraw), 2u);
  EXPECT_NE(text.substr(text.rfind(kRedraw)).find("9/100 files  10.0/100.0 MiB"), std::string::npos) << text;
  // A plan is drawn at once, whatever the time.
  p.plan(1, 0);
  EXPECT_EQ(count(out.text(), kRedraw), 3u);
}

TEST(Progress, FinishRedrawsOnceAndEndsTheLine) {
  Capture out;
  FakeClock clock;
  {
    Progress p(true, "downloading", out.get(), clock.fn());
    p.plan(1, kMiB);
    clock.advance(10ms);
    p.add_bytes(kMiB);  // too soon to draw
    p.file_done();      // too soon to draw
    p.finish();         // but the final state is drawn
    p.finish();         // once
  }                     // and the destructor adds nothing
  const std::string text = out.text();
  EXPECT_EQ(count(text, kRedraw), 2u) << text;
  EXPECT_EQ(count(text, "\n"), 1u) << text;
  EXPECT_TRUE(text.ends_with("\n")) << text;
  EXPECT_NE(text.substr(text.rfind(kRedraw)).find("1/1 files  1.0/1.0 MiB"), std::string::npos) << text;
}

TEST(Progress, DestructorFinishesAnUnfinishedLine) {
  Capture out;
  FakeClock clock;
  {
    Progress p(true, "downloading", out.get(), clock.fn());
    p.plan(1, kMiB);
  }
  const std::string text = out.text();
  EXPECT_TRUE(text.ends_with("\n")) << text;
  EXPECT_EQ(count(text, "\n"), 1u);
}

TEST(Progress, UpdatesFromManyThreadsAreAllCounted) {
  Capture out;
  FakeClock clock;
  Progress p(true, "downloading", out.get(), clock.fn());
  p.plan(8, 8 * kMiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1024; ++i) p.add_bytes(1024);
      p.file_done();
    });
  for (auto& t : threads) t.join();
  p.finish();
  const std::string text = out.text();
  EXPECT_NE(text.substr(text.rfind(kRedraw)).find("8/8 files  8.0/8.0 MiB"), std::string::npos) << text;
}

}  // namespace
}  // namespace kwheel
