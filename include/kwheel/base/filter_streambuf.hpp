#pragma once
// A stream filter: what is written is buffered until a whole chunk of it is
// ready (a line, say), and each ready chunk reaches the target stream
// through a transform. kwheel's output passes through two of these: the
// secret redactor (secret.hpp) and the control-byte filter (text.hpp).
// std::cerr is written from the build's worker threads (warnings while
// variants stage in parallel), so every entry point holds one lock: what
// waits is one buffer, and unguarded it was torn between threads.
#include <cstddef>
#include <mutex>
#include <streambuf>
#include <string>
#include <string_view>

namespace kwheel {

class FilterStreambuf : public std::streambuf {
 public:
  // How many leading bytes of what waits can be transformed now; the rest
  // waits for more text (or for the end).
  using Ready = std::size_t (*)(std::string_view waiting);
  // What a chunk becomes on the target. It sees each byte once, in order;
  // at the end it gets whatever still waits, ready or not.
  using Transform = std::string (*)(std::string chunk);

  FilterStreambuf(std::streambuf* target, Ready ready, Transform transform)
      : target_(target), ready_(ready), transform_(transform) {}
  // Passes on what still waits, then flushes the target.
  ~FilterStreambuf() override;
  FilterStreambuf(const FilterStreambuf&) = delete;
  FilterStreambuf& operator=(const FilterStreambuf&) = delete;

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  // Flushes the target only: what waits is not ready to be transformed,
  // and passing it on early would split what the transform must see whole.
  int sync() override;

 private:
  void emit(std::string chunk);
  std::streamsize put(const char* s, std::streamsize n);  // with mutex_ held
  std::mutex mutex_;
  std::streambuf* target_;
  Ready ready_;
  Transform transform_;
  std::string waiting_;
};

}  // namespace kwheel
