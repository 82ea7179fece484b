#include "kwheel/hub/http.hpp"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/curl_transport.hpp"
#include "kwheel/hub/download_queue.hpp"
#include "kwheel/hub/request_rules.hpp"

namespace kwheel {

namespace {

std::string size_text(size_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

Error answer_too_big(const std::string& url, size_t cap) {
  return Error(ErrorKind::network, "the answer from " + display_url(url) + " is larger than " + size_text(cap) +
                                       ", the most kwheel reads from it; stopped reading. Check that the URL is the Hugging Face Hub or package index you meant "
                                       "(a proxy or captive portal may be answering instead)");
}

// An answer's body, in memory up to a cap.
class BodyBuffer : public ResponseSink {
 public:
  explicit BodyBuffer(size_t max) : max_(max) {}
  bool body(const ResponseHead&, std::string_view bytes) override {
    // An endless answer must not be read forever, even one we would only
    // have kept the start of.
    if (text.size() + bytes.size() > max_) {
      too_big = true;
      return false;
    }
    text.append(bytes);
    return true;
  }
  std::string text;
  bool too_big = false;

 private:
  size_t max_;
};

HttpResponse answer(ResponseHead&& head, std::string&& body, const std::string& url) {
  HttpResponse r;
  r.status = head.status;
  r.headers = std::move(head.headers);
  r.reason = std::move(head.reason);
  r.body = std::move(body);
  r.url = url;
  return r;
}

}  // namespace

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::chrono::seconds parse_stall_timeout(const std::string& value, const std::string& named) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || n < 1 || n > 3600)
    throw Error(ErrorKind::usage, named + (named.starts_with("-") ? " '" : "='") + value + "': give whole seconds from 1 to 3600");
  return std::chrono::seconds(n);
}

// How get and post_multipart differ in the one request loop.
struct HttpClient::Loop {
  bool follow_redirects;
  bool reason_in_problem;  // uploads report "HTTP 503 Service Unavailable", the rest "HTTP 503"
  const char* check;       // what to check when it gives up
  size_t max_body;
};

HttpClient::HttpClient(HttpOptions options, std::shared_ptr<Transport> transport)
    : options_(std::move(options)), transport_(transport ? std::move(transport) : std::make_shared<CurlTransport>(options_)) {
  register_credentials();
}
HttpClient::~HttpClient() = default;

// What this client will send, in the forms it sends it: from here on no
// message or printed line may show any of them.
void HttpClient::register_credentials() const {
  register_secret(options_.token);
  if (!options_.token.empty() && (!options_.username.empty() || options_.basic)) register_secret_form(basic_credential(options_));
}

void HttpClient::use_basic_credentials(const std::string& username, const Secret& password) {
  options_.username = username;
  options_.token = password;
  options_.basic = true;
  register_credentials();
}

// Attempts with backoff; within one, redirects (bounded) with credentials
// for the auth origin only. Statuses are the caller's to judge, except
// those worth another try.
HttpResponse HttpClient::request(HttpRequest req, const std::vector<std::string>& extra_headers, const Loop& loop) {
  const std::string start_url = req.url;
  std::string last_problem;
  for (unsigned attempt = 0; attempt < std::max(1u, options_.max_attempts); ++attempt) {
    std::string retry_after;
    req.url = start_url;
    for (unsigned redirects = 0;; ++redirects) {
      if (redirects > options_.max_redirects)
        throw Error(ErrorKind::network, "too many redirects (more than " + std::to_string(options_.max_redirects) +
                                            ") fetching " + display_url(start_url) + "; the server is misconfigured");
      req.headers = request_headers(options_, req.url, extra_headers);
      BodyBuffer body(loop.max_body);
      ++stats_.requests;
      Exchange ex = transport_->perform(req, body);
      if (body.too_big || ex.failure == Exchange::Failure::too_big) throw answer_too_big(req.url, loop.max_body);
      if (!ex.ok()) {
        last_problem = ex.problem;
        if (ex.failure == Exchange::Failure::upload_unreadable)
          throw Error(ErrorKind::io, "cannot read the file being uploaded to " + display_url(req.url) + ": " + last_problem);
        if (ex.failure != Exchange::Failure::transient) throw Error(ErrorKind::network, "cannot reach " + display_url(req.url) + ": " + last_problem);
        break;
      }
      const NextStep step = next_step(ex.head, loop.follow_redirects);
      if (step.kind == NextStep::Kind::follow) {
        req.url = resolve_url(req.url, step.location);
        continue;
      }
      if (step.kind == NextStep::Kind::answer) return answer(std::move(ex.head), std::move(body.text), req.url);
      last_problem = "HTTP " + std::to_string(ex.head.status) + (loop.reason_in_problem && !ex.head.reason.empty() ? " " + ex.head.reason : "");
      retry_after = step.retry_after;
      break;
    }
    if (attempt + 1 < options_.max_attempts) {
      ++stats_.retries;
      transport_->sleep_for(backoff_for(options_, attempt, retry_after));
    }
  }
  throw Error(ErrorKind::network, "giving up on " + display_url(start_url) + " after " + std::to_string(options_.max_attempts) +
                                      " attempts: " + options_.token.redact(last_problem) + "; check " + loop.check + " and try again later");
}

HttpResponse HttpClient::get(const std::string& url, bool head, size_t max_body, const std::vector<std::string>& extra_headers) {
  HttpRequest req;
  req.url = url;
  req.head = head;
  req.accept_encoding = true;
  if (!head) req.max_declared_body = max_body;
  req.deadline = std::chrono::milliseconds(options_.stall_timeout) + std::chrono::milliseconds(max_body * 1000 / kAnswerDeadlineBytesPerSecond);
  return request(std::move(req), extra_headers, Loop{true, false, "the endpoint", max_body});
}

HttpResponse HttpClient::post_multipart(const std::string& url, const std::vector<FormPart>& parts, size_t max_body) {
  HttpRequest req;
  req.url = url;
  req.post = true;
  req.form = parts;
  req.max_declared_body = max_body;
  // No "Expect: 100-continue": some index servers never answer it.
  return request(std::move(req), {"Expect:"}, Loop{false, true, "the index", max_body});
}

void HttpClient::download(std::vector<DownloadJob> jobs, unsigned parallel, const DownloadProgress& progress) {
  DownloadQueue(options_, *transport_, stats_, progress).run(std::move(jobs), parallel);
}

}  // namespace kwheel
