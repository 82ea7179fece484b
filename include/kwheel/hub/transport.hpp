#pragma once
// The seam between kwheel's request rules (retry, backoff, redirects, the
// auth origin: hub/http.hpp) and the wire. A Transport carries out one HTTP
// exchange as it is asked, with no policy of its own: it neither follows
// redirects nor retries. libcurl's is the default (hub/curl_transport.hpp);
// tests give the Hub client and publish a fake one, as ninja gives its
// builder a fake DiskInterface, and so run without a server.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kwheel {

// One part of a multipart/form-data body: a text field, or a file streamed
// from disk (never read into memory) when `file` is set.
struct FormPart {
  std::string name;
  std::string value;
  std::filesystem::path file;
  std::string filename;       // the part's filename= (file parts)
  std::string content_type;   // file parts; default application/octet-stream
};

struct HttpRequest {
  std::string url;
  std::vector<std::string> headers;     // "Name: value", Authorization included where it may go
  bool head = false;                    // HEAD: no body
  bool post = false;                    // POST `form` as multipart/form-data
  std::vector<FormPart> form;
  size_t max_declared_body = 0;         // refuse an answer whose Content-Length is over this; 0: no cap
  std::chrono::milliseconds deadline{0};  // for the whole exchange; 0: none
  bool accept_encoding = false;         // offer compressed answers (decoded before the sink sees them)
};

// The status line and headers of the response being received. The one
// place header lines are parsed.
struct ResponseHead {
  long status = 0;
  std::string reason;                           // the status line's reason phrase
  std::map<std::string, std::string> headers;   // lower-case names, last value wins
  std::string header(const std::string& lower_name) const;
  // One header line without its CRLF. A status line starts afresh
  // (interim 1xx responses, and each response of a redirect chain).
  void add_line(std::string_view line);
};

// Receives the body as it arrives; returning false ends the exchange there
// (it then ends with Failure::stopped; the sink knows why it stopped).
class ResponseSink {
 public:
  virtual ~ResponseSink() = default;
  virtual bool body(const ResponseHead& head, std::string_view bytes) = 0;
};

struct Exchange {
  enum class Failure {
    none,               // an answer arrived (whatever its status)
    transient,          // dropped, refused, timed out, stalled: worth another try
    fatal,              // not worth another try (a TLS failure, a bad URL, ...)
    too_big,            // the declared length is over max_declared_body
    upload_unreadable,  // a file of the form could not be read
    stopped,            // the sink returned false
  };
  Failure failure = Failure::none;
  std::string problem;  // what failed, for messages
  ResponseHead head;
  bool ok() const { return failure == Failure::none; }
};

// Exchanges that run side by side (the download queue's).
class ExchangeSet {
 public:
  virtual ~ExchangeSet() = default;
  // Starts an exchange; `sink` must outlive it. False: the transport
  // refused it.
  virtual bool add(const HttpRequest& request, ResponseSink& sink) = 0;
  // Moves the running exchanges on; returns those that ended, by sink.
  virtual std::vector<std::pair<ResponseSink*, Exchange>> run() = 0;
  // Waits (briefly) for something to happen on the running exchanges.
  virtual void poll() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // One exchange, start to end. Called from several threads at once by
  // uploads: an implementation must allow that.
  virtual Exchange perform(const HttpRequest& request, ResponseSink& sink) = 0;
  // Exchanges at once, at most `parallel` to one host. The default runs
  // them one after another through perform().
  virtual std::unique_ptr<ExchangeSet> concurrent(unsigned parallel);
  // Waits out a backoff. A fake need not wait.
  virtual void sleep_for(std::chrono::milliseconds how_long);
};

}  // namespace kwheel
