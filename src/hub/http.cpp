#include "kwheel/hub/http.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "kwheel/base/error.hpp"
#include "kwheel/base/text.hpp"
#include "kwheel/base/unique_fd.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl global init failed");
  });
}

struct EasyFree {
  void operator()(CURL* c) const noexcept { curl_easy_cleanup(c); }
};
struct SlistFree {
  void operator()(curl_slist* s) const noexcept { curl_slist_free_all(s); }
};
struct MultiFree {
  void operator()(CURLM* m) const noexcept { curl_multi_cleanup(m); }
};
struct UrlFree {
  void operator()(CURLU* u) const noexcept { curl_url_cleanup(u); }
};
struct MimeFree {
  void operator()(curl_mime* m) const noexcept { curl_mime_free(m); }
};
struct CurlStrFree {
  void operator()(char* s) const noexcept { curl_free(s); }
};
using Easy = std::unique_ptr<CURL, EasyFree>;
using Slist = std::unique_ptr<curl_slist, SlistFree>;
using Multi = std::unique_ptr<CURLM, MultiFree>;
using Url = std::unique_ptr<CURLU, UrlFree>;
using CurlStr = std::unique_ptr<char, CurlStrFree>;
using Mime = std::unique_ptr<curl_mime, MimeFree>;

// Header lines of the current response; a new status line starts afresh
// (interim 1xx responses).
void add_header_line(std::map<std::string, std::string>& headers, std::string_view line) {
  if (line.starts_with("HTTP/")) {
    headers.clear();
    return;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return;
  headers[ascii_lower(std::string(line.substr(0, colon)))] = trim(std::string(line.substr(colon + 1)));
}

bool retryable_curl(CURLcode c) {
  switch (c) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_WEIRD_SERVER_REPLY:
      return true;
    default:
      return false;
  }
}

bool retryable_status(long s) { return s == 429 || s == 408 || (s >= 500 && s <= 599); }
bool redirect_status(long s) { return s == 301 || s == 302 || s == 303 || s == 307 || s == 308; }

std::chrono::milliseconds backoff_for(const HttpOptions& o, unsigned attempt, const std::string& retry_after) {
  if (!retry_after.empty()) {
    long secs = -1;
    if (std::all_of(retry_after.begin(), retry_after.end(), [](unsigned char c) { return std::isdigit(c); }) &&
        retry_after.size() < 9)
      secs = std::stol(retry_after);
    else if (time_t when = curl_getdate(retry_after.c_str(), nullptr); when > 0)
      secs = std::max<long>(0, when - time(nullptr));
    if (secs >= 0) return std::min<std::chrono::milliseconds>(std::chrono::seconds(secs), o.max_retry_after);
  }
  auto d = o.backoff * (1u << std::min(attempt, 10u));
  return std::min(d, o.max_backoff);
}

// Options every request shares.
void configure(CURL* c, const HttpOptions& o, const std::string& url, curl_slist* headers, char* errbuf) {
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::chrono::milliseconds(o.connect_timeout).count()));
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, kMinBytesPerSecond);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.stall_timeout.count()));
  curl_easy_setopt(c, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  if (!o.user_agent.empty()) curl_easy_setopt(c, CURLOPT_USERAGENT, o.user_agent.c_str());
  if (!o.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, o.ca_bundle.c_str());
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
}

// base64("user:password"), as "Authorization: Basic" carries it.
std::string basic_credential(const HttpOptions& o) {
  const std::string pair = o.username + ":" + o.token.reveal();
  std::string b64(4 * ((pair.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), reinterpret_cast<const unsigned char*>(pair.data()), static_cast<int>(pair.size()));
  b64.resize(static_cast<size_t>(std::max(n, 0)));
  return b64;
}

Slist auth_headers(const HttpOptions& o, const std::string& url, std::vector<std::string> extra = {}) {
  if (!o.token.empty() && o.auth_origin && url_origin(url) == *o.auth_origin)
    extra.push_back(o.username.empty() ? "Authorization: Bearer " + o.token.reveal() : "Authorization: Basic " + basic_credential(o));
  curl_slist* list = nullptr;
  for (const auto& h : extra) {
    curl_slist* next = curl_slist_append(list, h.c_str());
    if (!next) {
      curl_slist_free_all(list);
      throw std::bad_alloc();
    }
    list = next;
  }
  return Slist(list);
}

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

std::string curl_message(CURLcode code, const char* errbuf, const HttpOptions& o) {
  std::string m = errbuf && *errbuf ? errbuf : curl_easy_strerror(code);
  const bool untrusted = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
                         code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_ISSUER_ERROR;
  if (untrusted && !o.tls_fix.empty())
    m += (o.ca_bundle.empty() ? std::string() : " (CA file in use: '" + o.ca_bundle + "')") +
         "; if the server's certificate comes from a private CA, " + o.tls_fix;
  return m;
}

}  // namespace

std::string display_url(const std::string& url) {
  std::string out = url;
  const size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const size_t host = scheme + 3;
    const size_t end = std::min(out.find_first_of("/?#", host), out.size());
    const size_t at = out.rfind('@', end - 1);
    if (end > host && at != std::string::npos && at >= host) out.erase(host, at + 1 - host);
  }
  return redact_secrets(std::move(out));
}

void register_url_credentials(const std::string& url) {
  Url u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK) return;
  for (unsigned flags : {0u, static_cast<unsigned>(CURLU_URLDECODE)}) {
    char* out = nullptr;
    if (curl_url_get(u.get(), CURLUPART_PASSWORD, &out, flags) != CURLUE_OK || !out) continue;
    CurlStr p(out);
    register_secret(Secret(p.get()));
  }
}

std::string HttpResponse::header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? std::string() : it->second;
}

std::string url_origin(const std::string& url) {
  Url u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK) return {};
  char *scheme = nullptr, *host = nullptr, *port = nullptr;
  curl_url_get(u.get(), CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u.get(), CURLUPART_HOST, &host, 0);
  curl_url_get(u.get(), CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
  CurlStr s(scheme), h(host), p(port);
  if (!s || !h) return {};
  return ascii_lower(s.get()) + "://" + ascii_lower(h.get()) + ":" + (p ? p.get() : "");
}

std::string resolve_url(const std::string& base, const std::string& location) {
  Url u(curl_url());
  if (!u || curl_url_set(u.get(), CURLUPART_URL, base.c_str(), 0) != CURLUE_OK ||
      curl_url_set(u.get(), CURLUPART_URL, location.c_str(), 0) != CURLUE_OK)
    throw Error(ErrorKind::network, "cannot follow redirect from " + display_url(base) + " to '" + display_url(location) + "'");
  char* out = nullptr;
  curl_url_get(u.get(), CURLUPART_URL, &out, 0);
  CurlStr o(out);
  std::string r = o ? o.get() : "";
  if (!r.starts_with("http://") && !r.starts_with("https://"))
    throw Error(ErrorKind::network, "refusing redirect from " + display_url(base) + " to non-HTTP URL '" + display_url(location) + "'");
  return r;
}

std::optional<std::string> link_next(const std::string& header) {
  // What regex_search of <([^>]*)>\s*;\s*rel\s*=\s*"?next"? finds (as
  // huggingface_hub reads the header), by hand: std::regex recurses once per
  // character and overflows the stack on a long header (curl passes up to
  // 100 KiB). Linear: every '<' before one '>' shares that '>'.
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; };
  auto rel_next_at = [&](size_t i) {  // \s*;\s*rel\s*=\s*"?next"? at i
    auto skip = [&] {
      while (i < header.size() && space(header[i])) ++i;
    };
    auto take = [&](std::string_view word) {
      if (header.compare(i, word.size(), word) != 0) return false;
      i += word.size();
      return true;
    };
    skip();
    if (!take(";")) return false;
    skip();
    if (!take("rel")) return false;
    skip();
    if (!take("=")) return false;
    skip();
    take("\"");
    return take("next");
  };
  size_t close = std::string::npos;
  bool close_ok = false;
  for (size_t open = header.find('<'); open != std::string::npos; open = header.find('<', open + 1)) {
    if (close == std::string::npos || close < open) {
      close = header.find('>', open + 1);
      if (close == std::string::npos) return std::nullopt;
      close_ok = rel_next_at(close + 1);
    }
    if (close_ok) return header.substr(open + 1, close - open - 1);
  }
  return std::nullopt;
}

std::chrono::seconds parse_stall_timeout(const std::string& value, const std::string& named) {
  char* end = nullptr;
  const long n = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || n < 1 || n > 3600)
    throw Error(ErrorKind::usage, named + (named.starts_with("-") ? " '" : "='") + value + "': give whole seconds from 1 to 3600");
  return std::chrono::seconds(n);
}

std::string encode_component(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string encode_path(const std::string& path) {
  std::string out;
  size_t start = 0;
  while (true) {
    size_t slash = path.find('/', start);
    out += encode_component(path.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    out += '/';
    start = slash + 1;
  }
  return out;
}

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {
  global_init();
  // What this client will send, in the forms it sends it: from here on no
  // message or printed line may show any of them.
  register_secret(options_.token);
  if (!options_.token.empty() && !options_.username.empty()) register_secret_form(basic_credential(options_));
}
HttpClient::~HttpClient() = default;

HttpResponse HttpClient::get(const std::string& start_url, bool head, size_t max_body, const std::vector<std::string>& extra_headers) {
  std::string last_problem;
  for (unsigned attempt = 0; attempt < std::max(1u, options_.max_attempts); ++attempt) {
    std::string url = start_url;
    std::string retry_after;
    bool retry = false;
    for (unsigned redirects = 0;; ++redirects) {
      if (redirects > options_.max_redirects)
        throw Error(ErrorKind::network, "too many redirects (more than " + std::to_string(options_.max_redirects) +
                                            ") fetching " + display_url(start_url) + "; the server is misconfigured");
      Easy easy(curl_easy_init());
      if (!easy) throw std::bad_alloc();
      char errbuf[CURL_ERROR_SIZE] = {0};
      Slist headers = auth_headers(options_, url, extra_headers);
      configure(easy.get(), options_, url, headers.get(), errbuf);
      HttpResponse resp;
      bool too_big = false;
      struct Sink {
        HttpResponse* r;
        size_t max;
        bool* too_big;
      } sink{&resp, max_body, &too_big};
      curl_easy_setopt(easy.get(), CURLOPT_ACCEPT_ENCODING, "");
      if (!head) curl_easy_setopt(easy.get(), CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(max_body));
      const auto deadline = std::chrono::milliseconds(options_.stall_timeout) + std::chrono::milliseconds(max_body * 1000 / kAnswerDeadlineBytesPerSecond);
      curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(deadline.count()));
      if (head) curl_easy_setopt(easy.get(), CURLOPT_NOBODY, 1L);
      curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &sink);
      curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
        auto* s = static_cast<Sink*>(ud);
        if (s->r->body.size() + n > s->max) {
          *s->too_big = true;
          return 0;
        }
        s->r->body.append(p, n);
        return n;
      });
      curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, &resp.headers);
      curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
        std::string_view line(p, n);
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
        add_header_line(*static_cast<std::map<std::string, std::string>*>(ud), line);
        return n;
      });
      ++stats_.requests;
      CURLcode rc = curl_easy_perform(easy.get());
      if (too_big || rc == CURLE_FILESIZE_EXCEEDED) throw answer_too_big(url, max_body);
      if (rc != CURLE_OK) {
        last_problem = curl_message(rc, errbuf, options_);
        if (!retryable_curl(rc)) throw Error(ErrorKind::network, "cannot reach " + display_url(url) + ": " + last_problem);
        retry = true;
        break;
      }
      curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &resp.status);
      resp.url = url;
      if (redirect_status(resp.status) && !resp.header("location").empty()) {
        url = resolve_url(url, resp.header("location"));
        continue;
      }
      if (retryable_status(resp.status)) {
        last_problem = "HTTP " + std::to_string(resp.status);
        retry_after = resp.header("retry-after");
        retry = true;
        break;
      }
      return resp;
    }
    if (retry && attempt + 1 < options_.max_attempts) {
      ++stats_.retries;
      std::this_thread::sleep_for(backoff_for(options_, attempt, retry_after));
    }
  }
  throw Error(ErrorKind::network, "giving up on " + display_url(start_url) + " after " + std::to_string(options_.max_attempts) +
                                      " attempts: " + last_problem + "; check the endpoint and try again later");
}

HttpResponse HttpClient::post_multipart(const std::string& url, const std::vector<FormPart>& parts, size_t max_body) {
  std::string last_problem;
  for (unsigned attempt = 0; attempt < std::max(1u, options_.max_attempts); ++attempt) {
    Easy easy(curl_easy_init());
    if (!easy) throw std::bad_alloc();
    char errbuf[CURL_ERROR_SIZE] = {0};
    // No "Expect: 100-continue": some index servers never answer it.
    Slist headers = auth_headers(options_, url, {"Expect:"});
    configure(easy.get(), options_, url, headers.get(), errbuf);
    Mime mime(curl_mime_init(easy.get()));
    if (!mime) throw std::bad_alloc();
    for (const auto& p : parts) {
      curl_mimepart* part = curl_mime_addpart(mime.get());
      if (!part) throw std::bad_alloc();
      curl_mime_name(part, p.name.c_str());
      if (!p.file.empty()) {
        if (curl_mime_filedata(part, p.file.c_str()) != CURLE_OK)
          throw Error(ErrorKind::io, "cannot read '" + p.file.string() + "' for upload");
        curl_mime_filename(part, (p.filename.empty() ? p.file.filename().string() : p.filename).c_str());
        curl_mime_type(part, p.content_type.empty() ? "application/octet-stream" : p.content_type.c_str());
      } else {
        curl_mime_data(part, p.value.data(), p.value.size());
      }
    }
    curl_easy_setopt(easy.get(), CURLOPT_MIMEPOST, mime.get());
    HttpResponse resp;
    bool too_long = false;
    struct Sink {
      HttpResponse* r;
      size_t max;
      bool* too_long;
    } sink{&resp, max_body, &too_long};
    curl_easy_setopt(easy.get(), CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(max_body));
    curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      // An endless answer must not be read forever, even one we would
      // only have kept the start of.
      auto* s = static_cast<Sink*>(ud);
      if (s->r->body.size() + n > s->max) {
        *s->too_long = true;
        return 0;
      }
      s->r->body.append(p, n);
      return n;
    });
    curl_easy_setopt(easy.get(), CURLOPT_HEADERDATA, &resp);
    curl_easy_setopt(easy.get(), CURLOPT_HEADERFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      auto* r = static_cast<HttpResponse*>(ud);
      std::string_view line(p, n);
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
      if (line.starts_with("HTTP/")) {  // "HTTP/1.1 409 Conflict": keep the reason phrase
        size_t sp1 = line.find(' ');
        size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
        r->reason = sp2 == std::string_view::npos ? std::string() : std::string(line.substr(sp2 + 1));
      }
      add_header_line(r->headers, line);
      return n;
    });
    ++stats_.requests;
    CURLcode rc = curl_easy_perform(easy.get());
    std::string retry_after;
    if (too_long || rc == CURLE_FILESIZE_EXCEEDED) throw answer_too_big(url, max_body);
    if (rc != CURLE_OK) {
      last_problem = curl_message(rc, errbuf, options_);
      if (rc == CURLE_READ_ERROR) throw Error(ErrorKind::io, "cannot read the file being uploaded to " + display_url(url) + ": " + last_problem);
      if (!retryable_curl(rc)) throw Error(ErrorKind::network, "cannot reach " + display_url(url) + ": " + last_problem);
    } else {
      curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &resp.status);
      resp.url = url;
      if (!retryable_status(resp.status)) return resp;
      last_problem = "HTTP " + std::to_string(resp.status) + (resp.reason.empty() ? "" : " " + resp.reason);
      retry_after = resp.header("retry-after");
    }
    if (attempt + 1 < options_.max_attempts) {
      ++stats_.retries;
      std::this_thread::sleep_for(backoff_for(options_, attempt, retry_after));
    }
  }
  throw Error(ErrorKind::network, "giving up on " + display_url(url) + " after " + std::to_string(options_.max_attempts) + " attempts: " +
                                      options_.token.redact(last_problem) + "; check the index and try again later");
}

namespace {

// One file being downloaded: its progress survives retries, so a dropped
// connection resumes where it stopped instead of starting over.
struct Transfer {
  DownloadJob job;
  std::string url;
  unsigned attempt = 0;
  unsigned redirects = 0;
  Clock::time_point not_before{};
  std::string last_problem;

  // Per request:
  Easy easy;
  Slist headers;
  UniqueFd fd;
  uint64_t have = 0;        // bytes in the partial file
  bool range_sent = false;
  bool truncated = false;   // the server ignored Range: start over
  std::map<std::string, std::string> resp_headers;
  std::string error_body;
  bool error_body_full = false;  // cut off at kMaxErrorBody: not a transfer failure
  Hasher hasher{DigestAlgorithm::sha256};
  std::string io_error;
  // The server sent more than the listing announced: the server's fault, so
  // retried, unlike a local write error. Decided here, not from io_error's text.
  bool oversize = false;
  char errbuf[CURL_ERROR_SIZE] = {0};
  const DownloadProgress* progress = nullptr;
  TransferStats* stats = nullptr;

  bool verify_sha1() const { return job.sha256.empty() && !job.git_sha1.empty(); }

  void reset_hasher() {
    hasher = Hasher(verify_sha1() ? DigestAlgorithm::sha1 : DigestAlgorithm::sha256);
    // git's blob id hashes a "blob <size>\0" header before the content.
    if (verify_sha1() && job.size) hasher.update("blob " + std::to_string(*job.size) + std::string(1, '\0'));
  }

  // Opens the partial file, hashing what it already holds.
  void open_partial() {
    reset_hasher();
    fd = UniqueFd(::open(job.partial.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw Error(ErrorKind::io, "cannot write '" + job.partial.string() + "': " + std::strerror(errno));
    off_t end = ::lseek(fd.get(), 0, SEEK_END);
    have = end > 0 ? static_cast<uint64_t>(end) : 0;
    if (job.size && have > *job.size) {
      if (::ftruncate(fd.get(), 0) != 0) throw Error(ErrorKind::io, "cannot truncate '" + job.partial.string() + "'");
      have = 0;
    }
    ::lseek(fd.get(), 0, SEEK_SET);
    std::vector<char> buf(1 << 16);
    uint64_t left = have;
    while (left) {
      ssize_t n = ::read(fd.get(), buf.data(), std::min<uint64_t>(left, buf.size()));
      if (n <= 0) throw Error(ErrorKind::io, "cannot read '" + job.partial.string() + "'");
      hasher.update(std::string_view(buf.data(), static_cast<size_t>(n)));
      left -= static_cast<uint64_t>(n);
    }
    ::lseek(fd.get(), static_cast<off_t>(have), SEEK_SET);
  }

  long status() const {
    long s = 0;
    curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &s);
    return s;
  }

  size_t on_data(const char* p, size_t n) {
    long s = status();
    if (s != 200 && s != 206) {
      // Only the start of an error or redirect answer is kept, and the
      // transfer ends there: an endless one must not be read forever.
      constexpr size_t kMaxErrorBody = 4096;
      error_body.append(p, std::min<size_t>(n, kMaxErrorBody - error_body.size()));
      if (error_body.size() < kMaxErrorBody) return n;
      error_body_full = true;
      return 0;
    }
    if (s == 200 && range_sent && !truncated) {
      // Range was ignored: the body is the whole file again.
      if (::ftruncate(fd.get(), 0) != 0 || ::lseek(fd.get(), 0, SEEK_SET) != 0) {
        io_error = std::strerror(errno);
        return 0;
      }
      have = 0;
      reset_hasher();
      truncated = true;
    }
    if (job.size && have + n > *job.size) {
      io_error = "server sent more bytes than the " + std::to_string(*job.size) + " the listing announced";
      oversize = true;
      return 0;
    }
    size_t done = 0;
    while (done < n) {
      ssize_t w = ::write(fd.get(), p + done, n - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        io_error = std::strerror(errno);
        return 0;
      }
      done += static_cast<size_t>(w);
    }
    hasher.update(std::string_view(p, n));
    have += n;
    stats->bytes += n;
    if (progress && progress->on_bytes) progress->on_bytes(n);
    return n;
  }
};

}  // namespace

void HttpClient::download(std::vector<DownloadJob> jobs, unsigned parallel, const DownloadProgress& progress) {
  Multi multi(curl_multi_init());
  if (!multi) throw std::bad_alloc();
  parallel = std::max(1u, parallel);
  curl_multi_setopt(multi.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
  curl_multi_setopt(multi.get(), CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(parallel));

  std::deque<std::unique_ptr<Transfer>> queue;
  for (auto& j : jobs) {
    auto t = std::make_unique<Transfer>();
    t->url = j.url;
    t->job = std::move(j);
    t->progress = &progress;
    t->stats = &stats_;
    queue.push_back(std::move(t));
  }
  std::map<CURL*, std::unique_ptr<Transfer>> active;

  // Removes every running transfer before an exception leaves this scope.
  struct Cleanup {
    CURLM* m;
    std::map<CURL*, std::unique_ptr<Transfer>>& a;
    ~Cleanup() {
      for (auto& [easy, _] : a) curl_multi_remove_handle(m, easy);
    }
  } cleanup{multi.get(), active};

  auto fail = [&](Transfer& t, ErrorKind kind, const std::string& why) {
    return Error(kind, "downloading " + t.job.label + ": " + why);
  };

  auto schedule_retry = [&](std::unique_ptr<Transfer> t, const std::string& problem, const std::string& retry_after) {
    t->last_problem = problem;
    if (++t->attempt >= options_.max_attempts)
      throw fail(*t, ErrorKind::network, "gave up after " + std::to_string(options_.max_attempts) + " attempts (" + problem + ")");
    ++stats_.retries;
    t->not_before = Clock::now() + backoff_for(options_, t->attempt - 1, retry_after);
    t->redirects = 0;
    t->url = t->job.url;
    queue.push_back(std::move(t));
  };

  auto finish_file = [&](std::unique_ptr<Transfer> t) {
    t->fd.reset();
    std::string problem;
    if (t->job.size && t->have != *t->job.size)
      problem = "got " + std::to_string(t->have) + " bytes, expected " + std::to_string(*t->job.size);
    else if (!t->job.sha256.empty() || !t->job.git_sha1.empty()) {
      std::string got = to_hex(t->hasher.finish());
      const std::string& want = t->verify_sha1() ? t->job.git_sha1 : t->job.sha256;
      if (got != want) problem = std::string(t->verify_sha1() ? "git blob id" : "sha256") + " mismatch (expected " + want + ", got " + got + ")";
    }
    if (!problem.empty()) {
      // Corrupt bytes must never be used or resumed from.
      std::error_code ec;
      fs::remove(t->job.partial, ec);
      schedule_retry(std::move(t), problem, "");
      return;
    }
    std::error_code ec;
    fs::rename(t->job.partial, t->job.dest, ec);
    if (ec) throw fail(*t, ErrorKind::io, "cannot move into the cache: " + ec.message());
    if (progress.on_file_done) progress.on_file_done(t->job);
  };

  auto start = [&](std::unique_ptr<Transfer> t) {
    t->open_partial();
    if (t->job.size && t->have == *t->job.size) {
      finish_file(std::move(t));  // complete from an earlier run
      return;
    }
    t->easy.reset(curl_easy_init());
    if (!t->easy) throw std::bad_alloc();
    std::vector<std::string> extra;
    t->range_sent = t->have > 0;
    t->truncated = false;
    if (t->range_sent) extra.push_back("Range: bytes=" + std::to_string(t->have) + "-");
    t->headers = auth_headers(options_, t->url, extra);
    t->resp_headers.clear();
    t->error_body.clear();
    t->error_body_full = false;
    t->io_error.clear();
    t->oversize = false;
    t->errbuf[0] = 0;
    configure(t->easy.get(), options_, t->url, t->headers.get(), t->errbuf);
    curl_easy_setopt(t->easy.get(), CURLOPT_PRIVATE, t.get());
    curl_easy_setopt(t->easy.get(), CURLOPT_WRITEDATA, t.get());
    curl_easy_setopt(t->easy.get(), CURLOPT_WRITEFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      return static_cast<Transfer*>(ud)->on_data(p, n);
    });
    curl_easy_setopt(t->easy.get(), CURLOPT_HEADERDATA, &t->resp_headers);
    curl_easy_setopt(t->easy.get(), CURLOPT_HEADERFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      std::string_view line(p, n);
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
      add_header_line(*static_cast<std::map<std::string, std::string>*>(ud), line);
      return n;
    });
    ++stats_.requests;
    CURL* key = t->easy.get();
    if (curl_multi_add_handle(multi.get(), key) != CURLM_OK) throw fail(*t, ErrorKind::network, "libcurl refused the transfer");
    active.emplace(key, std::move(t));
  };

  auto complete = [&](CURL* easy, CURLcode rc) {
    curl_multi_remove_handle(multi.get(), easy);
    auto node = active.extract(easy);
    std::unique_ptr<Transfer> t = std::move(node.mapped());
    if (!t->io_error.empty()) {
      if (t->oversize) {
        std::error_code ec;
        t->fd.reset();
        fs::remove(t->job.partial, ec);
        const std::string problem = t->io_error;
        return schedule_retry(std::move(t), problem, "");
      }
      throw fail(*t, ErrorKind::io, "writing '" + t->job.partial.string() + "': " + t->io_error);
    }
    if (rc == CURLE_WRITE_ERROR && t->error_body_full) rc = CURLE_OK;  // status and headers are all we need
    if (rc != CURLE_OK) {
      std::string msg = curl_message(rc, t->errbuf, options_);
      if (!retryable_curl(rc)) throw fail(*t, ErrorKind::network, msg);
      t->fd.reset();
      return schedule_retry(std::move(t), msg, "");
    }
    long s = t->status();
    auto header = [&](const char* n) {
      auto it = t->resp_headers.find(n);
      return it == t->resp_headers.end() ? std::string() : it->second;
    };
    if (redirect_status(s) && !header("location").empty()) {
      if (++t->redirects > options_.max_redirects)
        throw fail(*t, ErrorKind::network, "too many redirects (more than " + std::to_string(options_.max_redirects) + "); the server is misconfigured");
      t->url = resolve_url(t->url, header("location"));
      t->fd.reset();
      queue.push_front(std::move(t));
      return;
    }
    if (s == 416 && t->range_sent) {
      // Our partial file is no prefix the server recognises: start over.
      t->fd.reset();
      std::error_code ec;
      fs::remove(t->job.partial, ec);
      return schedule_retry(std::move(t), "HTTP 416 on resume", "");
    }
    if (retryable_status(s)) {
      t->fd.reset();
      const std::string retry_after = header("retry-after");
      return schedule_retry(std::move(t), "HTTP " + std::to_string(s), retry_after);
    }
    if (s != 200 && s != 206) {
      std::string code = header("x-error-code"), message = header("x-error-message");
      ErrorKind kind = (s == 401 || s == 403) ? ErrorKind::auth : s == 404 ? ErrorKind::not_found : ErrorKind::network;
      throw fail(*t, kind, "HTTP " + std::to_string(s) + (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + options_.token.redact(message)));
    }
    finish_file(std::move(t));
  };

  while (!queue.empty() || !active.empty()) {
    auto now = Clock::now();
    // Start what is due, up to the parallelism bound.
    for (size_t n = queue.size(); n-- > 0 && active.size() < parallel;) {
      auto t = std::move(queue.front());
      queue.pop_front();
      if (t->not_before > now) queue.push_back(std::move(t));
      else start(std::move(t));
    }
    if (active.empty()) {
      if (queue.empty()) break;
      auto next = std::min_element(queue.begin(), queue.end(), [](auto& a, auto& b) { return a->not_before < b->not_before; });
      std::this_thread::sleep_until((*next)->not_before);  // backoff: nothing else to do
      continue;
    }
    int running = 0;
    if (CURLMcode mc = curl_multi_perform(multi.get(), &running); mc != CURLM_OK)
      throw Error(ErrorKind::network, std::string("libcurl: ") + curl_multi_strerror(mc));
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi.get(), &left))
      if (msg->msg == CURLMSG_DONE) complete(msg->easy_handle, msg->data.result);
    if (!active.empty()) curl_multi_poll(multi.get(), nullptr, 0, 200, nullptr);
  }
}

}  // namespace kwheel
