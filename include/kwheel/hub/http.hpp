#pragma once
// HTTP over libcurl for the Hub and package indexes. Redirects are followed
// by us, not by curl, so the bearer token is attached only to URLs of the
// origin it belongs to (never to an LFS/Xet CDN), and loops are bounded.
// Retryable failures (429 with Retry-After, 5xx, dropped connections) are
// retried with capped exponential backoff; downloads resume with Range.
// get and post_multipart share one request loop; the download queue
// (download_queue.hpp), whose transfers run side by side, follows the same
// rules (request_rules.hpp). The wire is a Transport (transport.hpp).
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kwheel/base/secret.hpp"
#include "kwheel/hub/transport.hpp"
#include "kwheel/hub/url.hpp"

namespace kwheel {

// A transfer moving fewer bytes per second than this, on average over the
// stall timeout, is dropped (and retried like a dropped connection): a
// server dripping a few bytes a second must not hold kwheel forever. Far
// below any working link; a stalled one sends nothing.
constexpr long kMinBytesPerSecond = 1024;
// An answer read into memory (get) also has a deadline: the stall timeout
// plus its size cap at this rate (8 MiB: 128 s). A drip just above the
// minimum rate cannot stretch one request to hours.
constexpr size_t kAnswerDeadlineBytesPerSecond = 64 << 10;

// Caps on answers kwheel reads into memory; a larger one is cut off as soon
// as it crosses the cap (or at once when its Content-Length says so).
constexpr size_t kMaxHubJsonBody = 8 << 20;   // Hub API JSON: a real tree page is ~300 KB
constexpr size_t kMaxIndexPageBody = 16 << 20;  // simple-API pages (pin)
constexpr size_t kMaxUploadAnswer = 1 << 20;    // an index's answer to an upload

struct HttpOptions {
  std::optional<std::string> auth_origin;  // "http://127.0.0.1:8000": token goes only here
  Secret token;                            // sent as "Authorization: Bearer ..."
  std::string username;                    // set: "Authorization: Basic username:token" instead (package indexes)
  // Basic even when the username or the token is empty, as pip sends
  // "user:" for an index URL that names only a user.
  bool basic = false;
  unsigned max_attempts = 5;               // per request, first try included
  std::chrono::milliseconds backoff{500};  // doubled per retry, capped at max_backoff
  std::chrono::milliseconds max_backoff{8000};
  std::chrono::seconds max_retry_after{60};
  std::chrono::seconds connect_timeout{15};
  std::chrono::seconds stall_timeout{60};  // abort a transfer that moves < kMinBytesPerSecond this long
  unsigned max_redirects = 10;
  std::string user_agent;
  std::string ca_bundle;                   // extra CA file; empty = system default
  std::string ca_from;                     // where ca_bundle came from ("--cert", "SSL_CERT_FILE"), for messages
  std::string client_cert;                 // PEM file with the client certificate and its key (mutual TLS); empty = none
  // Appended to certificate-verification errors: how this command's user
  // gives a CA ("pass its CA certificate with --ca-bundle FILE").
  std::string tls_fix;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lower-case names, last value wins
  std::string body;
  std::string url;                             // after redirects
  std::string reason;                          // the status line's reason phrase
  std::string header(const std::string& lower_name) const;
};

// A stall timeout as the user gave it (`named`: "--stall-timeout" or
// "KWHEEL_STALL_TIMEOUT"): whole seconds from 1 to 3600, else a usage error
// naming where it came from.
std::chrono::seconds parse_stall_timeout(const std::string& value, const std::string& named);

struct DownloadJob {
  std::string url;
  std::filesystem::path partial;     // bytes accumulate here (resumable)
  std::filesystem::path dest;        // renamed here once verified
  std::optional<uint64_t> size;      // expected size
  std::string sha256;                // expected hex sha256 (LFS), or
  std::string git_sha1;              // expected git blob id (plain files)
  std::string label;                 // for messages: the repo path
};

struct TransferStats {
  uint64_t requests = 0;
  uint64_t retries = 0;
  uint64_t bytes = 0;
};

// Called from the transfer loop (one thread) as bytes arrive and files finish.
struct DownloadProgress {
  std::function<void(uint64_t bytes_delta)> on_bytes;
  std::function<void(const DownloadJob&)> on_file_done;
};

class HttpClient {
 public:
  // `transport` carries the exchanges; none: libcurl (CurlTransport).
  explicit HttpClient(HttpOptions options, std::shared_ptr<Transport> transport = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // GET (or HEAD) with redirects and retries; returns the final response,
  // whatever its status (callers map statuses to errors). Network failure
  // after all attempts throws Error(network) naming the URL.
  // An answer over max_body bytes is an Error(network) as soon as it is.
  HttpResponse get(const std::string& url, bool head = false, size_t max_body = kMaxHubJsonBody,
                   const std::vector<std::string>& extra_headers = {});

  // POST multipart/form-data. Redirects are not followed (a 3xx comes back
  // to the caller: an upload must not be replayed, credentials included,
  // somewhere else). 5xx, 429 and dropped connections are retried with
  // backoff, the body rebuilt from disk each time; any other status is
  // returned as is. Network failure after all attempts throws Error(network),
  // and so does an answer over max_body bytes (not retried: the upload
  // itself went through).
  HttpResponse post_multipart(const std::string& url, const std::vector<FormPart>& parts, size_t max_body = kMaxUploadAnswer);

  // Downloads every job, at most `parallel` at once over shared connections
  // (HTTP/2 multiplexed where offered). Verifies size and hash of each file
  // before renaming it into place; a file that fails verification is
  // discarded and fetched again. Throws Error naming the first file that
  // could not be fetched; files already verified stay in place.
  void download(std::vector<DownloadJob> jobs, unsigned parallel, const DownloadProgress& progress = {});

  // Credentials learnt after a first answer (pip asks keyring after a 401):
  // "Authorization: Basic" from the next request on, to auth_origin only.
  void use_basic_credentials(const std::string& username, const Secret& password);

  const TransferStats& stats() const { return stats_; }
  const HttpOptions& options() const { return options_; }

 private:
  struct Loop;
  HttpResponse request(HttpRequest request, const std::vector<std::string>& extra_headers, const Loop& loop);
  void register_credentials() const;

  HttpOptions options_;
  std::shared_ptr<Transport> transport_;
  TransferStats stats_;
};

}  // namespace kwheel
