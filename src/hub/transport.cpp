#include "kwheel/hub/transport.hpp"

#include <thread>

#include "kwheel/base/text.hpp"

namespace kwheel {

std::string ResponseHead::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

void ResponseHead::add_line(std::string_view line) {
  if (line.starts_with("HTTP/")) {  // "HTTP/1.1 409 Conflict": keep the reason phrase
    headers.clear();
    const size_t sp1 = line.find(' ');
    const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    reason = sp2 == std::string_view::npos ? std::string() : std::string(line.substr(sp2 + 1));
    return;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return;
  headers[ascii_lower(std::string(line.substr(0, colon)))] = trim(std::string(line.substr(colon + 1)));
}

namespace {

// Runs each exchange to its end when run() comes: enough for a transport
// that answers at once (a test's).
class OneAfterAnother : public ExchangeSet {
 public:
  explicit OneAfterAnother(Transport& transport) : transport_(transport) {}
  bool add(const HttpRequest& request, ResponseSink& sink) override {
    pending_.emplace_back(request, &sink);
    return true;
  }
  std::vector<std::pair<ResponseSink*, Exchange>> run() override {
    std::vector<std::pair<ResponseSink*, Exchange>> done;
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto& [request, sink] : pending) done.emplace_back(sink, transport_.perform(request, *sink));
    return done;
  }
  void poll() override {}

 private:
  Transport& transport_;
  std::vector<std::pair<HttpRequest, ResponseSink*>> pending_;
};

}  // namespace

std::unique_ptr<ExchangeSet> Transport::concurrent(unsigned) { return std::make_unique<OneAfterAnother>(*this); }

void Transport::sleep_for(std::chrono::milliseconds how_long) { std::this_thread::sleep_for(how_long); }

}  // namespace kwheel
