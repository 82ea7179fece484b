#pragma once
// The Transport kwheel uses on the wire: libcurl, one easy handle per
// exchange, and a multi handle for exchanges at once (HTTP/2 multiplexed
// where offered). It applies the options every request shares (timeouts,
// the minimum transfer rate, CA file, user agent) and follows nothing.
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/transport.hpp"

namespace kwheel {

class CurlTransport : public Transport {
 public:
  explicit CurlTransport(const HttpOptions& options);
  Exchange perform(const HttpRequest& request, ResponseSink& sink) override;
  std::unique_ptr<ExchangeSet> concurrent(unsigned parallel) override;

 private:
  HttpOptions options_;
};

}  // namespace kwheel
