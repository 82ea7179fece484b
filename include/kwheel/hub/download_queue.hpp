#pragma once
// Files downloaded side by side, at most `parallel` at once. Each one
// resumes where an earlier attempt or run stopped (Range), is verified
// (size, then sha256 or git blob id) before it is renamed into place, and is
// fetched again when it fails verification. Retries, backoff, redirects and
// where credentials go follow the rules of every request
// (request_rules.hpp); the exchanges run on a Transport.
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kwheel/base/error.hpp"
#include "kwheel/hub/http.hpp"
#include "kwheel/hub/transport.hpp"

namespace kwheel {

class DownloadQueue {
 public:
  DownloadQueue(const HttpOptions& options, Transport& transport, TransferStats& stats, const DownloadProgress& progress);
  ~DownloadQueue();
  DownloadQueue(const DownloadQueue&) = delete;
  DownloadQueue& operator=(const DownloadQueue&) = delete;

  // Throws Error naming the first file that could not be fetched; files
  // already verified stay in place.
  void run(std::vector<DownloadJob> jobs, unsigned parallel);

 private:
  class Transfer;
  using Owned = std::unique_ptr<Transfer>;

  void start_due(unsigned parallel);
  void wait_for_backoff();
  void start(Owned t);
  void complete(ResponseSink* sink, Exchange ex);
  void answered(Owned t, const ResponseHead& head);
  void retry_later(Owned t, const std::string& problem, const std::string& retry_after);
  void finish_file(Owned t);
  static Error fail(const Transfer& t, ErrorKind kind, const std::string& why);

  const HttpOptions& options_;
  Transport& transport_;
  TransferStats& stats_;
  const DownloadProgress& progress_;
  std::deque<Owned> queue_;              // waiting to start, in order (a backoff's not_before aside)
  std::map<ResponseSink*, Owned> active_;
  // Declared after active_: the running exchanges end before their sinks go.
  std::unique_ptr<ExchangeSet> exchanges_;
};

}  // namespace kwheel
