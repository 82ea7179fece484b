#include "kwheel/hub/download_queue.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "kwheel/base/digest.hpp"
#include "kwheel/base/unique_fd.hpp"
#include "kwheel/hub/request_rules.hpp"

namespace kwheel {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// One file being downloaded: its progress survives retries, so a dropped
// connection resumes where it stopped instead of starting over.
class DownloadQueue::Transfer : public ResponseSink {
 public:
  Transfer(DownloadJob j, const DownloadProgress& progress, TransferStats& stats)
      : job(std::move(j)), url(job.url), progress_(progress), stats_(stats) {}

  DownloadJob job;
  std::string url;
  unsigned attempt = 0;
  unsigned redirects = 0;
  Clock::time_point not_before{};

  // Per request:
  UniqueFd fd;
  uint64_t have = 0;        // bytes in the partial file
  bool range_sent = false;
  bool truncated = false;   // the server ignored Range: start over
  std::string error_body;
  bool error_body_full = false;  // cut off at kMaxErrorBody: not a transfer failure
  Hasher hasher{DigestAlgorithm::sha256};
  std::string io_error;
  // The server sent more than the listing announced: the server's fault, so
  // retried, unlike a local write error. Decided here, not from io_error's text.
  bool oversize = false;

  bool verify_sha1() const { return job.sha256.empty() && !job.git_sha1.empty(); }
  bool complete_already() const { return job.size && have == *job.size; }

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

  // The headers of the next request: Range when there is something to resume.
  std::vector<std::string> begin_request() {
    range_sent = have > 0;
    truncated = false;
    error_body.clear();
    error_body_full = false;
    io_error.clear();
    oversize = false;
    if (!range_sent) return {};
    return {"Range: bytes=" + std::to_string(have) + "-"};
  }

  // Corrupt or unresumable bytes must never be used or resumed from.
  void discard() {
    fd.reset();
    std::error_code ec;
    fs::remove(job.partial, ec);
  }

  // Why the finished file is not the one listed; empty when it is.
  std::string verification_problem() {
    if (job.size && have != *job.size) return "got " + std::to_string(have) + " bytes, expected " + std::to_string(*job.size);
    if (job.sha256.empty() && job.git_sha1.empty()) return "";
    std::string got = to_hex(hasher.finish());
    const std::string& want = verify_sha1() ? job.git_sha1 : job.sha256;
    if (got == want) return "";
    return std::string(verify_sha1() ? "git blob id" : "sha256") + " mismatch (expected " + want + ", got " + got + ")";
  }

  bool body(const ResponseHead& head, std::string_view bytes) override {
    if (head.status != 200 && head.status != 206) return keep_error_body(bytes);
    if (head.status == 200 && range_sent && !truncated && !start_over()) return false;
    if (job.size && have + bytes.size() > *job.size) {
      io_error = "server sent more bytes than the " + std::to_string(*job.size) + " the listing announced";
      oversize = true;
      return false;
    }
    for (size_t done = 0; done < bytes.size();) {
      ssize_t w = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        io_error = std::strerror(errno);
        return false;
      }
      done += static_cast<size_t>(w);
    }
    hasher.update(bytes);
    have += bytes.size();
    stats_.bytes += bytes.size();
    if (progress_.on_bytes) progress_.on_bytes(bytes.size());
    return true;
  }

 private:
  void reset_hasher() {
    hasher = Hasher(verify_sha1() ? DigestAlgorithm::sha1 : DigestAlgorithm::sha256);
    // git's blob id hashes a "blob <size>\0" header before the content.
    if (verify_sha1() && job.size) hasher.update("blob " + std::to_string(*job.size) + std::string(1, '\0'));
  }

  // Only the start of an error or redirect answer is kept, and the
  // transfer ends there: an endless one must not be read forever.
  bool keep_error_body(std::string_view bytes) {
    constexpr size_t kMaxErrorBody = 4096;
    error_body.append(bytes.data(), std::min<size_t>(bytes.size(), kMaxErrorBody - error_body.size()));
    if (error_body.size() < kMaxErrorBody) return true;
    error_body_full = true;
    return false;
  }

  // Range was ignored: the body is the whole file again.
  bool start_over() {
    if (::ftruncate(fd.get(), 0) != 0 || ::lseek(fd.get(), 0, SEEK_SET) != 0) {
      io_error = std::strerror(errno);
      return false;
    }
    have = 0;
    reset_hasher();
    truncated = true;
    return true;
  }

  const DownloadProgress& progress_;
  TransferStats& stats_;
};

DownloadQueue::DownloadQueue(const HttpOptions& options, Transport& transport, TransferStats& stats, const DownloadProgress& progress)
    : options_(options), transport_(transport), stats_(stats), progress_(progress) {}

DownloadQueue::~DownloadQueue() = default;

Error DownloadQueue::fail(const Transfer& t, ErrorKind kind, const std::string& why) {
  return Error(kind, "downloading " + t.job.label + ": " + why);
}

void DownloadQueue::run(std::vector<DownloadJob> jobs, unsigned parallel) {
  parallel = std::max(1u, parallel);
  exchanges_ = transport_.concurrent(parallel);
  for (auto& j : jobs) queue_.push_back(std::make_unique<Transfer>(std::move(j), progress_, stats_));
  while (!queue_.empty() || !active_.empty()) {
    start_due(parallel);
    if (active_.empty()) {
      if (queue_.empty()) break;
      wait_for_backoff();
      continue;
    }
    for (auto& [sink, ex] : exchanges_->run()) complete(sink, std::move(ex));
    if (!active_.empty()) exchanges_->poll();
  }
}

// Starts what is due, up to the parallelism bound, in queue order.
void DownloadQueue::start_due(unsigned parallel) {
  const auto now = Clock::now();
  for (size_t n = queue_.size(); n-- > 0 && active_.size() < parallel;) {
    Owned t = std::move(queue_.front());
    queue_.pop_front();
    if (t->not_before > now) queue_.push_back(std::move(t));
    else start(std::move(t));
  }
}

// Nothing is running and everything waits out a backoff: sleep until the
// first is due, then it is.
void DownloadQueue::wait_for_backoff() {
  auto next = std::min_element(queue_.begin(), queue_.end(), [](auto& a, auto& b) { return a->not_before < b->not_before; });
  transport_.sleep_for(std::chrono::ceil<std::chrono::milliseconds>((*next)->not_before - Clock::now()));
  (*next)->not_before = {};
}

void DownloadQueue::start(Owned t) {
  t->open_partial();
  if (t->complete_already()) return finish_file(std::move(t));  // from an earlier run
  HttpRequest req;
  req.url = t->url;
  req.headers = request_headers(options_, t->url, t->begin_request());
  ++stats_.requests;
  ResponseSink* key = t.get();
  if (!exchanges_->add(req, *t)) throw fail(*t, ErrorKind::network, "libcurl refused the transfer");
  active_.emplace(key, std::move(t));
}

void DownloadQueue::complete(ResponseSink* sink, Exchange ex) {
  Owned t = std::move(active_.extract(sink).mapped());
  if (!t->io_error.empty()) {
    if (!t->oversize) throw fail(*t, ErrorKind::io, "writing '" + t->job.partial.string() + "': " + t->io_error);
    t->discard();
    const std::string problem = t->io_error;
    return retry_later(std::move(t), problem, "");
  }
  // An error answer cut short still has all we need: status and headers.
  if (ex.failure == Exchange::Failure::stopped && t->error_body_full) ex.failure = Exchange::Failure::none;
  if (!ex.ok()) {
    if (ex.failure != Exchange::Failure::transient) throw fail(*t, ErrorKind::network, ex.problem);
    t->fd.reset();
    return retry_later(std::move(t), ex.problem, "");
  }
  answered(std::move(t), ex.head);
}

void DownloadQueue::answered(Owned t, const ResponseHead& head) {
  const long s = head.status;
  const NextStep step = next_step(head, true);
  if (step.kind == NextStep::Kind::follow) {
    if (++t->redirects > options_.max_redirects)
      throw fail(*t, ErrorKind::network, "too many redirects (more than " + std::to_string(options_.max_redirects) + "); the server is misconfigured");
    t->url = resolve_url(t->url, step.location);
    t->fd.reset();
    queue_.push_front(std::move(t));
    return;
  }
  if (s == 416 && t->range_sent) {
    // Our partial file is no prefix the server recognises: start over.
    t->discard();
    return retry_later(std::move(t), "HTTP 416 on resume", "");
  }
  if (step.kind == NextStep::Kind::retry) {
    t->fd.reset();
    return retry_later(std::move(t), "HTTP " + std::to_string(s), step.retry_after);
  }
  if (s != 200 && s != 206) {
    const std::string code = head.header("x-error-code"), message = head.header("x-error-message");
    const ErrorKind kind = (s == 401 || s == 403) ? ErrorKind::auth : s == 404 ? ErrorKind::not_found : ErrorKind::network;
    throw fail(*t, kind, "HTTP " + std::to_string(s) + (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + options_.token.redact(message)));
  }
  finish_file(std::move(t));
}

void DownloadQueue::retry_later(Owned t, const std::string& problem, const std::string& retry_after) {
  if (++t->attempt >= options_.max_attempts)
    throw fail(*t, ErrorKind::network, "gave up after " + std::to_string(options_.max_attempts) + " attempts (" + problem + ")");
  ++stats_.retries;
  t->not_before = Clock::now() + backoff_for(options_, t->attempt - 1, retry_after);
  t->redirects = 0;
  t->url = t->job.url;
  queue_.push_back(std::move(t));
}

void DownloadQueue::finish_file(Owned t) {
  t->fd.reset();
  if (const std::string problem = t->verification_problem(); !problem.empty()) {
    t->discard();
    return retry_later(std::move(t), problem, "");
  }
  std::error_code ec;
  fs::rename(t->job.partial, t->job.dest, ec);
  if (ec) throw fail(*t, ErrorKind::io, "cannot move into the cache: " + ec.message());
  if (progress_.on_file_done) progress_.on_file_done(t->job);
}

}  // namespace kwheel
