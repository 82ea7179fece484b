#include "kwheel/base/work_pool.hpp"

#include <algorithm>

namespace kwheel {

unsigned resolve_workers(unsigned requested) { return requested ? requested : std::max(1u, std::thread::hardware_concurrency()); }

WorkPool::WorkPool(unsigned workers, unsigned slots) {
  workers = resolve_workers(workers);
  slots_ = slots ? slots : 2 * workers;
  threads_.reserve(workers);
  try {
    for (unsigned w = 0; w < workers; ++w) threads_.emplace_back([this, w] { run(w); });
  } catch (...) {
    stop();  // joins the workers already started
    throw;
  }
}

WorkPool::~WorkPool() { stop(); }

void WorkPool::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

unsigned WorkPool::peak_slots_held() const {
  std::lock_guard lock(mutex_);
  return peak_;
}

void WorkPool::enqueue(std::function<void(unsigned)> job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::logic_error("WorkPool: submit after shutdown");
    queue_.push_back(std::move(job));
  }
  work_ready_.notify_one();
}

void WorkPool::run(unsigned worker) {
  for (;;) {
    std::function<void(unsigned)> job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(worker);  // a packaged_task: its exception goes to the future
  }
}

void WorkPool::acquire_slot() {
  std::unique_lock lock(mutex_);
  slot_free_.wait(lock, [this] { return held_ < slots_; });
  peak_ = std::max(peak_, ++held_);
}

bool WorkPool::try_acquire_slot() {
  std::lock_guard lock(mutex_);
  if (held_ >= slots_) return false;
  peak_ = std::max(peak_, ++held_);
  return true;
}

bool WorkPool::slot_free() const {
  std::lock_guard lock(mutex_);
  return held_ < slots_;
}

void WorkPool::release_slot() noexcept {
  {
    std::lock_guard lock(mutex_);
    --held_;
  }
  slot_free_.notify_one();
}

}  // namespace kwheel
