#include "kwheel/base/byte_budget.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kwheel {
namespace {

// Whether this thread holds a reservation: holding one while waiting for
// another is how two threads would wait on each other.
thread_local bool holds_reservation = false;

}  // namespace

ByteBudget::Reservation::~Reservation() {
  if (budget_ == nullptr) return;
  budget_->release(bytes_);
  holds_reservation = false;
}

ByteBudget::Reservation ByteBudget::reserve(std::uint64_t bytes, const char* what) {
  if (bytes > capacity_) {
    throw std::length_error(std::string(what) + " needs " + std::to_string(bytes) + " bytes, more than the " +
                            std::to_string(capacity_) + " bytes all threads may hold together");
  }
  if (holds_reservation) throw std::logic_error("a thread asked for a second memory reservation while holding one");
  std::unique_lock lock(m_);
  const std::uint64_t ticket = next_ticket_++;
  cv_.wait(lock, [&] { return serving_ == ticket && bytes <= available_; });
  ++serving_;
  available_ -= bytes;
  peak_held_ = std::max(peak_held_, capacity_ - available_);
  lock.unlock();
  // The next ticket may fit beside this one.
  cv_.notify_all();
  holds_reservation = true;
  return Reservation(this, bytes);
}

void ByteBudget::release(std::uint64_t bytes) noexcept {
  {
    const std::lock_guard lock(m_);
    available_ += bytes;
  }
  cv_.notify_all();
}

std::uint64_t ByteBudget::waiting() const {
  const std::lock_guard lock(m_);
  return next_ticket_ - serving_;
}

std::uint64_t ByteBudget::peak_held() const {
  const std::lock_guard lock(m_);
  return peak_held_;
}

}  // namespace kwheel
