#pragma once
// A number of bytes shared by every thread of a run: before a task allocates
// working memory whose size an input decides (a decompressor's window), it
// reserves that much here, and gives it back when done. However many
// threads run (--jobs writers per kernel, kernels side by side), the
// reserved memory never exceeds the capacity.
//
// Reservations are granted in the order they were asked for, so a large one
// is not starved by a stream of small ones. No deadlock: a thread may hold
// one reservation at a time (a second one, while it holds the first, is a
// logic error, thrown at once), and a holder does its work and gives it back
// without waiting for anything else. A reservation larger than the capacity
// can never be granted, so it throws at once rather than wait forever.
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace kwheel {

class ByteBudget {
 public:
  explicit ByteBudget(std::uint64_t capacity) : capacity_(capacity), available_(capacity) {}
  ByteBudget(const ByteBudget&) = delete;
  ByteBudget& operator=(const ByteBudget&) = delete;

  // Bytes held while alive; released by its destructor, which runs on the
  // thread that reserved them (the one-per-thread rule is kept per thread).
  class Reservation {
   public:
    Reservation(Reservation&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
    Reservation& operator=(Reservation&&) = delete;
    Reservation(const Reservation&) = delete;
    Reservation& operator=(const Reservation&) = delete;
    ~Reservation();
    std::uint64_t bytes() const { return bytes_; }

   private:
    friend class ByteBudget;
    Reservation(ByteBudget* budget, std::uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    ByteBudget* budget_;
    std::uint64_t bytes_;
  };

  // Waits until `bytes` are free and it is this caller's turn, then holds
  // them. Throws std::length_error (with `what` in the message) when
  // `bytes` exceed the capacity, and std::logic_error when this thread
  // already holds a reservation of any budget.
  Reservation reserve(std::uint64_t bytes, const char* what);

  std::uint64_t capacity() const { return capacity_; }
  // The most bytes held at once so far (tests and benchmarks read it).
  std::uint64_t peak_held() const;
  // Callers waiting in reserve() now (tests wait for a queue to form).
  std::uint64_t waiting() const;

 private:
  void release(std::uint64_t bytes) noexcept;

  const std::uint64_t capacity_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::uint64_t available_;
  std::uint64_t peak_held_ = 0;
  std::uint64_t next_ticket_ = 0;  // handed to the next caller of reserve
  std::uint64_t serving_ = 0;      // the ticket whose turn it is
};

}  // namespace kwheel
