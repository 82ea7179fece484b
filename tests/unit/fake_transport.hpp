#pragma once
// Unit-test helper: a Transport that answers from a script instead of a
// server, records every request it was asked for, and never waits out a
// backoff (it records the wait instead).
#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/hub/transport.hpp"

namespace kwheel::testing {

struct FakeAnswer {
  long status = 200;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string reason;
  // Set: the exchange fails this way (a dropped connection: transient)
  // instead of answering.
  Exchange::Failure failure = Exchange::Failure::none;
};

inline FakeAnswer ok(std::string body) { return FakeAnswer{200, std::move(body), {}, "", Exchange::Failure::none}; }
inline FakeAnswer dropped() { return FakeAnswer{0, "", {}, "", Exchange::Failure::transient}; }

// The value of header `name` ("Authorization") in a request, if sent.
inline std::optional<std::string> sent_header(const HttpRequest& r, const std::string& name) {
  for (const auto& h : r.headers)
    if (h.size() > name.size() && h.compare(0, name.size(), name) == 0 && h[name.size()] == ':')
      return h.substr(std::min(h.size(), name.size() + 2));  // after ": "
  return std::nullopt;
}

class FakeTransport : public Transport {
 public:
  // The answers to `url`, one per request in turn; the last one repeats.
  // A URL with no answers gets a 404 that names no Hub error code.
  void on(const std::string& url, std::vector<FakeAnswer> answers) {
    std::lock_guard lock(mutex_);
    routes_[url] = {std::move(answers), 0};
  }

  Exchange perform(const HttpRequest& request, ResponseSink& sink) override {
    FakeAnswer a;
    {
      std::lock_guard lock(mutex_);
      sent.push_back(request);
      auto it = routes_.find(request.url);
      if (it == routes_.end()) a.status = 404;
      else {
        auto& [answers, next] = it->second;
        a = answers[std::min(next, answers.size() - 1)];
        ++next;
      }
    }
    Exchange ex;
    if (a.failure != Exchange::Failure::none) {
      ex.failure = a.failure;
      ex.problem = "connection dropped (fake)";
      return ex;
    }
    ex.head.status = a.status;
    ex.head.reason = a.reason;
    ex.head.headers = a.headers;
    if (!request.head && !a.body.empty() && !sink.body(ex.head, a.body)) ex.failure = Exchange::Failure::stopped;
    return ex;
  }

  void sleep_for(std::chrono::milliseconds how_long) override {
    std::lock_guard lock(mutex_);
    slept.push_back(how_long);
  }

  // The requests sent to `url`, in order.
  std::vector<HttpRequest> sent_to(const std::string& url) const {
    std::lock_guard lock(mutex_);
    std::vector<HttpRequest> out;
    for (const auto& r : sent)
      if (r.url == url) out.push_back(r);
    return out;
  }

  std::vector<HttpRequest> sent;
  std::vector<std::chrono::milliseconds> slept;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::pair<std::vector<FakeAnswer>, size_t>> routes_;
};

}  // namespace kwheel::testing
