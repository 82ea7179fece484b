#include "kwheel/base/filter_streambuf.hpp"

#include <utility>

namespace kwheel {

FilterStreambuf::~FilterStreambuf() {
  const std::lock_guard lock(mutex_);
  emit(std::move(waiting_));
  target_->pubsync();
}

void FilterStreambuf::emit(std::string chunk) {
  if (chunk.empty()) return;
  const std::string out = transform_(std::move(chunk));
  target_->sputn(out.data(), static_cast<std::streamsize>(out.size()));
}

FilterStreambuf::int_type FilterStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  const char ch = traits_type::to_char_type(c);
  const std::lock_guard lock(mutex_);
  put(&ch, 1);
  return c;
}

std::streamsize FilterStreambuf::xsputn(const char* s, std::streamsize n) {
  const std::lock_guard lock(mutex_);
  return put(s, n);
}

std::streamsize FilterStreambuf::put(const char* s, std::streamsize n) {
  waiting_.append(s, static_cast<std::size_t>(n));
  const std::size_t ready = ready_(waiting_);
  if (ready > 0) {
    std::string rest = waiting_.substr(ready);
    waiting_.resize(ready);
    emit(std::move(waiting_));
    waiting_ = std::move(rest);
  }
  return n;
}

int FilterStreambuf::sync() {
  const std::lock_guard lock(mutex_);
  return target_->pubsync();
}

}  // namespace kwheel
