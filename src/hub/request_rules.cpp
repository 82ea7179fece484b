#include "kwheel/hub/request_rules.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <ctime>

#include "kwheel/hub/curl_library.hpp"

namespace kwheel {

// 5xx answers are retried, except those that say the request itself can
// never succeed there: 501 Not Implemented, 505 HTTP Version Not Supported,
// 506 Variant Also Negotiates, 507 Insufficient Storage (a full disk does
// not clear within the back-off), 508 Loop Detected, 510 Not Extended, 511
// Network Authentication Required (a captive portal).
bool retryable_status(long s) {
  if (s == 429 || s == 408) return true;
  if (s < 500 || s > 599) return false;
  return s != 501 && s != 505 && s != 506 && s != 507 && s != 508 && s != 510 && s != 511;
}
bool redirect_status(long s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

std::chrono::milliseconds backoff_for(const HttpOptions& o, unsigned attempt, const std::string& retry_after) {
  if (!retry_after.empty()) {
    long secs = -1;
    if (std::all_of(retry_after.begin(), retry_after.end(), [](unsigned char c) { return std::isdigit(c); }) &&
        retry_after.size() < 9)
      secs = std::stol(retry_after);
    else if (time_t when = curl::library().getdate(retry_after.c_str(), nullptr); when > 0)
      secs = std::max<long>(0, when - time(nullptr));
    if (secs >= 0) return std::min<std::chrono::milliseconds>(std::chrono::seconds(secs), o.max_retry_after);
  }
  auto d = o.backoff * (1u << std::min(attempt, 10u));
  return std::min(d, o.max_backoff);
}

std::string basic_credential(const HttpOptions& o) {
  const std::string pair = o.username + ":" + o.token.reveal();
  std::string b64(4 * ((pair.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), reinterpret_cast<const unsigned char*>(pair.data()), static_cast<int>(pair.size()));
  b64.resize(static_cast<size_t>(std::max(n, 0)));
  return b64;
}

std::vector<std::string> request_headers(const HttpOptions& o, const std::string& url, std::vector<std::string> extra) {
  if (!o.auth_origin || url_origin(url) != *o.auth_origin) return extra;
  if (o.basic ? !o.username.empty() || !o.token.empty() : !o.token.empty())
    extra.push_back(o.username.empty() && !o.basic ? "Authorization: Bearer " + o.token.reveal() : "Authorization: Basic " + basic_credential(o));
  return extra;
}

NextStep next_step(const ResponseHead& head, bool follow_redirects) {
  NextStep step;
  if (follow_redirects && redirect_status(head.status) && !head.header("location").empty()) {
    step.kind = NextStep::Kind::follow;
    step.location = head.header("location");
  } else if (retryable_status(head.status)) {
    step.kind = NextStep::Kind::retry;
    step.retry_after = head.header("retry-after");
  }
  return step;
}

}  // namespace kwheel
