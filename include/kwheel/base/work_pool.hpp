#pragma once
// One set of worker threads for a whole run, shared by all its users (every
// member of every wheel of every kernel a build writes), and one budget of
// slots that bounds the work in flight over all of them: memory stays fixed
// however many users there are, and however big their inputs.
//
// OrderedTasks is one user's view: it hands results back in the order the
// tasks were submitted, as a stream cut into pieces must be joined.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>

namespace kwheel {

// A requested worker count: 0 is one per CPU (at least one).
unsigned resolve_workers(unsigned requested);

class WorkPool {
 public:
  // `workers`: 0 is one per CPU. `slots`: tasks that may be reserved at once
  // over all users; 0 is two per worker (one being worked on, one waiting).
  explicit WorkPool(unsigned workers, unsigned slots = 0);
  ~WorkPool();  // runs what is queued, then joins the workers
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  unsigned workers() const { return static_cast<unsigned>(threads_.size()); }
  unsigned slots() const { return slots_; }
  // The most slots held at once so far (tests and bench check the bound).
  unsigned peak_slots_held() const;

  // Runs task(worker) on a worker; `worker` (0 .. workers()-1) indexes
  // per-worker state, which no other thread touches while the task runs.
  // The future carries the task's result or its exception.
  template <class F>
  auto submit(F task) -> std::future<std::invoke_result_t<F&, unsigned>> {
    using R = std::invoke_result_t<F&, unsigned>;
    // std::function must be copyable, packaged_task is not.
    auto job = std::make_shared<std::packaged_task<R(unsigned)>>(std::move(task));
    auto result = job->get_future();
    enqueue([job](unsigned worker) { (*job)(worker); });
    return result;
  }

  // The slot budget. A user holding slots must not block for another (see
  // OrderedTasks::reserve): it could wait on itself.
  void acquire_slot();
  bool try_acquire_slot();
  void release_slot() noexcept;
  bool slot_free() const;

 private:
  void enqueue(std::function<void(unsigned)> job);
  void run(unsigned worker);
  void stop() noexcept;

  mutable std::mutex mutex_;
  std::condition_variable work_ready_, slot_free_;
  std::deque<std::function<void(unsigned)>> queue_;
  bool stopping_ = false;
  unsigned slots_ = 0, held_ = 0, peak_ = 0;
  std::vector<std::thread> threads_;
};

// One user's tasks on a pool, results in submission order.
template <class T>
class OrderedTasks {
 public:
  explicit OrderedTasks(WorkPool& pool) : pool_(pool) {}
  // Waits for the tasks still in flight (they may point at the caller's
  // buffers) and gives their slots back, also after an error.
  ~OrderedTasks() {
    for (auto& f : pending_) {
      f.wait();
      pool_.release_slot();
    }
    if (reserved_) pool_.release_slot();
  }
  OrderedTasks(const OrderedTasks&) = delete;
  OrderedTasks& operator=(const OrderedTasks&) = delete;

  // Takes a slot for the next submit(). Blocks only while this user has
  // nothing in flight; otherwise, with the budget spent, returns false and
  // the caller pop()s first. A user that blocked while holding finished
  // results could deadlock the run: those slots come back only through it.
  bool reserve() {
    if (reserved_) return true;
    if (pending_.empty())
      pool_.acquire_slot();
    else if (!pool_.try_acquire_slot())
      return false;
    reserved_ = true;
    return true;
  }

  // Either queues the task and keeps its future, or throws having queued
  // nothing: a task running with no future to wait for could outlive what
  // it points at.
  template <class F>
  void submit(F task) {
    if (!reserved_) throw std::logic_error("OrderedTasks::submit without a reserved slot");
    pending_.emplace_back();
    try {
      pending_.back() = pool_.submit(std::move(task));
    } catch (...) {
      pending_.pop_back();
      throw;
    }
    reserved_ = false;
  }

  // The oldest task's result (rethrows its exception); frees its slot.
  T pop() {
    if (pending_.empty()) throw std::logic_error("OrderedTasks::pop with nothing in flight");
    std::future<T> f = std::move(pending_.front());
    pending_.pop_front();
    struct Release {
      WorkPool& pool;
      ~Release() { pool.release_slot(); }
    } release{pool_};
    return f.get();
  }

  bool empty() const { return pending_.empty(); }
  size_t size() const { return pending_.size(); }
  bool reserved() const { return reserved_; }

 private:
  WorkPool& pool_;
  std::deque<std::future<T>> pending_;
  bool reserved_ = false;
};

}  // namespace kwheel
