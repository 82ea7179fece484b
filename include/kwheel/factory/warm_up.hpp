#pragma once
// A run's one-time initialisations, begun side by side as it starts.
//
// Each would happen on first use anyway, but then on the path to the first
// chunk and one after another: the built-in policy data (manylinux/*.json,
// parsed when the first variant is planned; every other writer waits for
// it) and OpenSSL's digest tables (built when the first hash is taken). On
// the 16-core machine they held the first chunk back by 11 ms of a 0.75 s
// build (docs/performance.md). Begun here, each on its own thread while the
// caller resolves and lists its sources, they are ready or nearly so when
// the writers start; a writer that needs one before then waits for that one
// alone, as it would have.
#include <functional>
#include <thread>
#include <vector>

namespace kwheel {

class WarmUp {
 public:
  using Task = std::function<void()>;
  // The built-in policy data and OpenSSL's SHA-256.
  static std::vector<Task> run_inits();
  // Each task on a thread of its own; one that throws is left to fail
  // again, and be reported, where its result is used.
  explicit WarmUp(std::vector<Task> tasks = run_inits());
  WarmUp(const WarmUp&) = delete;
  WarmUp& operator=(const WarmUp&) = delete;
  ~WarmUp() = default;  // joins: each takes a few milliseconds

 private:
  std::vector<std::jthread> threads_;
};

}  // namespace kwheel
