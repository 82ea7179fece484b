#include "kwheel/hub/curl_transport.hpp"

#include <curl/curl.h>

#include <map>
#include <memory>
#include <mutex>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/curl_handles.hpp"
#include "kwheel/hub/system_ca.hpp"

namespace kwheel {

namespace {

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (curl::library().global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) throw std::runtime_error("libcurl global init failed");
  });
}

using curl::Easy;
using curl::Mime;
using curl::Multi;
using curl::Slist;

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

// A server that wants a client certificate ends the handshake with an
// alert, which OpenSSL reports only in its text (as a read or connect
// error); asking again without one cannot help.
bool refused_for_no_client_cert(CURLcode code, const std::string& text, const HttpOptions& o) {
  const bool handshake = code == CURLE_SSL_CONNECT_ERROR || code == CURLE_RECV_ERROR || code == CURLE_SEND_ERROR;
  return handshake && o.client_cert.empty() &&
         (text.find("alert certificate required") != std::string::npos || text.find("alert handshake failure") != std::string::npos);
}

std::string curl_text(CURLcode code, const char* errbuf) { return errbuf && *errbuf ? errbuf : curl::library().easy_strerror(code); }

std::string curl_message(CURLcode code, const char* errbuf, const HttpOptions& o) {
  std::string m = curl_text(code, errbuf);
  const bool untrusted = code == CURLE_PEER_FAILED_VERIFICATION || code == CURLE_SSL_CACERT_BADFILE ||
                         code == CURLE_SSL_CERTPROBLEM || code == CURLE_SSL_ISSUER_ERROR;
  if (untrusted && !o.tls_fix.empty())
    m += (o.ca_bundle.empty() ? std::string(" (CAs in use: the system's)")
                              : " (CA file in use: '" + o.ca_bundle + "'" + (o.ca_from.empty() ? "" : ", from " + o.ca_from) + ")") +
         "; if the server's certificate comes from a private CA, " + o.tls_fix;
  if (refused_for_no_client_cert(code, m, o))
    m += "; the server may want a client certificate: pass --client-cert FILE (one PEM file with the certificate and its private key)";
  if (code == CURLE_SSL_CERTPROBLEM && !o.client_cert.empty())
    m += " (client certificate '" + o.client_cert + "'); --client-cert takes one PEM file holding the certificate and its unencrypted private key";
  return m;
}

Slist header_list(const std::vector<std::string>& lines) {
  curl_slist* list = nullptr;
  for (const auto& h : lines) {
    curl_slist* next = curl::library().slist_append(list, h.c_str());
    if (!next) {
      curl::library().slist_free_all(list);
      throw std::bad_alloc();
    }
    list = next;
  }
  return Slist(list);
}

// One exchange on one easy handle. Not movable: libcurl holds its address.
class CurlCall {
 public:
  CurlCall(const HttpOptions& options, const HttpRequest& request, ResponseSink& sink)
      : options_(options), easy_(curl::library().easy_init()), sink_(sink) {
    if (!easy_) throw std::bad_alloc();
    headers_ = header_list(request.headers);
    configure(request);
    if (request.post) attach_form(request.form);
  }
  CurlCall(const CurlCall&) = delete;
  CurlCall& operator=(const CurlCall&) = delete;

  CURL* easy() const { return easy_.get(); }
  ResponseSink& sink() const { return sink_; }

  Exchange finish(CURLcode rc) {
    Exchange ex;
    curl::library().easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &head_.status);
    ex.head = std::move(head_);
    if (rc == CURLE_OK) return ex;
    ex.problem = curl_message(rc, errbuf_, options_);
    using F = Exchange::Failure;
    ex.failure = rc == CURLE_WRITE_ERROR && stopped_   ? F::stopped
                 : rc == CURLE_FILESIZE_EXCEEDED       ? F::too_big
                 : rc == CURLE_READ_ERROR              ? F::upload_unreadable
                 : refused_for_no_client_cert(rc, curl_text(rc, errbuf_), options_) ? F::fatal
                 : retryable_curl(rc)                  ? F::transient
                                                       : F::fatal;
    return ex;
  }

 private:
  void configure(const HttpRequest& r) {
    CURL* c = easy_.get();
    const HttpOptions& o = options_;
    const auto set = [c](CURLoption option, auto value) { curl::library().easy_setopt(c, option, value); };
    set(CURLOPT_URL, r.url.c_str());
    set(CURLOPT_FOLLOWLOCATION, 0L);
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::chrono::milliseconds(o.connect_timeout).count()));
    set(CURLOPT_LOW_SPEED_LIMIT, kMinBytesPerSecond);
    set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(o.stall_timeout.count()));
    set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS);
    set(CURLOPT_ERRORBUFFER, errbuf_);
    if (!o.user_agent.empty()) set(CURLOPT_USERAGENT, o.user_agent.c_str());
    if (!o.ca_bundle.empty()) set(CURLOPT_CAINFO, o.ca_bundle.c_str());
    else if (const std::string& system = system_ca_bundle(); !system.empty())
      set(CURLOPT_CAINFO, system.c_str());  // a libcurl with no CA path of its own (hub/system_ca.hpp)
    if (!o.client_cert.empty()) {  // pip's --client-cert: certificate and key in one PEM file
      set(CURLOPT_SSLCERT, o.client_cert.c_str());
      set(CURLOPT_SSLCERTTYPE, "PEM");
      set(CURLOPT_SSLKEY, o.client_cert.c_str());
      set(CURLOPT_SSLKEYTYPE, "PEM");
    }
    if (headers_) set(CURLOPT_HTTPHEADER, headers_.get());
    if (r.accept_encoding) set(CURLOPT_ACCEPT_ENCODING, "");
    if (r.max_declared_body) set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(r.max_declared_body));
    if (r.deadline.count() > 0) set(CURLOPT_TIMEOUT_MS, static_cast<long>(r.deadline.count()));
    if (r.head) set(CURLOPT_NOBODY, 1L);
    set(CURLOPT_WRITEDATA, this);
    set(CURLOPT_WRITEFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      return static_cast<CurlCall*>(ud)->on_body(p, n);
    });
    set(CURLOPT_HEADERDATA, &head_);
    set(CURLOPT_HEADERFUNCTION, +[](char* p, size_t, size_t n, void* ud) -> size_t {
      std::string_view line(p, n);
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
      static_cast<ResponseHead*>(ud)->add_line(line);
      return n;
    });
  }

  // Files are streamed from disk each time the body is sent.
  void attach_form(const std::vector<FormPart>& parts) {
    mime_.reset(curl::library().mime_init(easy_.get()));
    if (!mime_) throw std::bad_alloc();
    for (const auto& p : parts) {
      curl_mimepart* part = curl::library().mime_addpart(mime_.get());
      if (!part) throw std::bad_alloc();
      curl::library().mime_name(part, p.name.c_str());
      if (!p.file.empty()) {
        if (curl::library().mime_filedata(part, p.file.c_str()) != CURLE_OK)
          throw Error(ErrorKind::io, "cannot read '" + p.file.string() + "' for upload");
        curl::library().mime_filename(part, (p.filename.empty() ? p.file.filename().string() : p.filename).c_str());
        curl::library().mime_type(part, p.content_type.empty() ? "application/octet-stream" : p.content_type.c_str());
      } else {
        curl::library().mime_data(part, p.value.data(), p.value.size());
      }
    }
    curl::library().easy_setopt(easy_.get(), CURLOPT_MIMEPOST, mime_.get());
  }

  size_t on_body(const char* p, size_t n) {
    curl::library().easy_getinfo(easy_.get(), CURLINFO_RESPONSE_CODE, &head_.status);
    if (sink_.body(head_, std::string_view(p, n))) return n;
    stopped_ = true;
    return 0;
  }

  const HttpOptions& options_;
  Easy easy_;
  Slist headers_;
  Mime mime_;
  char errbuf_[CURL_ERROR_SIZE] = {0};
  ResponseSink& sink_;
  ResponseHead head_;
  bool stopped_ = false;
};

// Exchanges on one multi handle, sharing its connections.
class CurlSet : public ExchangeSet {
 public:
  CurlSet(const HttpOptions& options, unsigned parallel) : options_(options), multi_(curl::library().multi_init()) {
    if (!multi_) throw std::bad_alloc();
    curl::library().multi_setopt(multi_.get(), CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
    curl::library().multi_setopt(multi_.get(), CURLMOPT_MAX_HOST_CONNECTIONS, static_cast<long>(parallel));
  }
  // Every running exchange leaves the multi handle before either is freed,
  // an exception unwinding included.
  ~CurlSet() override {
    for (auto& [easy, _] : calls_) curl::library().multi_remove_handle(multi_.get(), easy);
  }

  bool add(const HttpRequest& request, ResponseSink& sink) override {
    auto call = std::make_unique<CurlCall>(options_, request, sink);
    if (curl::library().multi_add_handle(multi_.get(), call->easy()) != CURLM_OK) return false;
    calls_.emplace(call->easy(), std::move(call));
    return true;
  }

  std::vector<std::pair<ResponseSink*, Exchange>> run() override {
    int running = 0;
    if (CURLMcode mc = curl::library().multi_perform(multi_.get(), &running); mc != CURLM_OK)
      throw Error(ErrorKind::network, std::string("libcurl: ") + curl::library().multi_strerror(mc));
    std::vector<std::pair<ResponseSink*, Exchange>> done;
    int left = 0;
    while (CURLMsg* msg = curl::library().multi_info_read(multi_.get(), &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* easy = msg->easy_handle;
      const CURLcode rc = msg->data.result;
      curl::library().multi_remove_handle(multi_.get(), easy);
      auto node = calls_.extract(easy);
      done.emplace_back(&node.mapped()->sink(), node.mapped()->finish(rc));
    }
    return done;
  }

  void poll() override {
    if (!calls_.empty()) curl::library().multi_poll(multi_.get(), nullptr, 0, 200, nullptr);
  }

 private:
  const HttpOptions& options_;
  Multi multi_;
  std::map<CURL*, std::unique_ptr<CurlCall>> calls_;
};

}  // namespace

CurlTransport::CurlTransport(const HttpOptions& options) : options_(options) { global_init(); }

Exchange CurlTransport::perform(const HttpRequest& request, ResponseSink& sink) {
  CurlCall call(options_, request, sink);
  return call.finish(curl::library().easy_perform(call.easy()));
}

std::unique_ptr<ExchangeSet> CurlTransport::concurrent(unsigned parallel) { return std::make_unique<CurlSet>(options_, parallel); }

}  // namespace kwheel
