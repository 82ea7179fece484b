#pragma once
// The rules every kwheel request follows, whether it runs alone (get,
// post_multipart) or beside others (the download queue): which answers are
// retried and after how long, which redirects are followed, and where
// credentials may go (only to the auth origin: never to an LFS/Xet CDN or
// any other host a redirect names).
#include <chrono>
#include <string>
#include <vector>

#include "kwheel/hub/http.hpp"
#include "kwheel/hub/transport.hpp"

namespace kwheel {

bool retryable_status(long status);
bool redirect_status(long status);

// The wait before retry `attempt` (0-based): the server's Retry-After
// (seconds or an HTTP date) capped at max_retry_after, else the capped
// exponential backoff.
std::chrono::milliseconds backoff_for(const HttpOptions& options, unsigned attempt, const std::string& retry_after);

// base64("user:password"), as "Authorization: Basic" carries it.
std::string basic_credential(const HttpOptions& options);

// `extra` header lines, plus Authorization when `url` is on the auth origin.
std::vector<std::string> request_headers(const HttpOptions& options, const std::string& url, std::vector<std::string> extra = {});

// What the request loop does with an answer that arrived.
struct NextStep {
  enum class Kind { answer, follow, retry } kind = Kind::answer;
  std::string location;     // follow: the Location header, unresolved (resolve_url)
  std::string retry_after;  // retry: the server's Retry-After, if any
};
// A redirect with a Location is followed where `follow_redirects`; 408,
// 429 and 5xx are retried; anything else is the answer.
NextStep next_step(const ResponseHead& head, bool follow_redirects);

}  // namespace kwheel
