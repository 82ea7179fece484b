// The HTTP client: the stall timeout as users give it, and the caps on
// what hostile servers send.
#include "kwheel/hub/http.hpp"

#include <gtest/gtest.h>

#include "kwheel/base/error.hpp"

using namespace kwheel;

TEST(StallTimeout, WholeSecondsFromOneToAnHour) {
  EXPECT_EQ(parse_stall_timeout("1", "--stall-timeout"), std::chrono::seconds(1));
  EXPECT_EQ(parse_stall_timeout("3600", "--stall-timeout"), std::chrono::seconds(3600));
  for (const char* bad : {"", "0", "-5", "3601", "1.5", "2s", "x", "99999999999999999999"}) {
    try {
      parse_stall_timeout(bad, "KWHEEL_STALL_TIMEOUT");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(std::string(e.what()), "KWHEEL_STALL_TIMEOUT='" + std::string(bad) + "': give whole seconds from 1 to 3600");
    }
  }
}

// ---------------------------------------------------------------- hostile answers
// A one-connection-at-a-time server on 127.0.0.1 that answers every request
// with `answer(fd)`, in a thread; the answer ends when the client hangs up.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <thread>

#include "error_support.hpp"

namespace {

bool send_all(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

class HostileServer {
 public:
  explicit HostileServer(std::function<void(int)> answer) : answer_(std::move(answer)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 8) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~HostileServer() {
    stop_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);
    ::close(listen_fd_);
    thread_.join();
  }
  std::string url(const std::string& path = "/x") const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int requests() const { return requests_; }

 private:
  void serve() {
    while (!stop_) {
      int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<size_t>(n));
      }
      ++requests_;
      answer_(fd);
      ::close(fd);
    }
  }
  std::function<void(int)> answer_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> requests_{0};
  std::thread thread_;
};

// Headers, then body bytes until the client hangs up.
void endless(int fd, const std::string& status_line = "HTTP/1.1 200 OK") {
  if (!send_all(fd, status_line + "\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n")) return;
  const std::string chunk(64 << 10, ' ');
  while (send_all(fd, chunk)) {
  }
}

HttpOptions one_try() {
  HttpOptions o;
  o.max_attempts = 1;
  o.stall_timeout = std::chrono::seconds(1);
  return o;
}

}  // namespace

TEST(HttpCaps, EndlessAnswerIsCutAtTheCap) {
  HostileServer server([](int fd) { endless(fd); });
  HttpClient http(one_try());
  const std::string msg = kwheel::testing::error_of([&] { http.get(server.url(), false, 64 << 10); }, ErrorKind::network);
  EXPECT_NE(msg.find("larger than 64 KiB"), std::string::npos) << msg;
  EXPECT_NE(msg.find(server.url()), std::string::npos) << msg;
  EXPECT_EQ(server.requests(), 1);  // an answer too big is not asked for again
}

TEST(HttpCaps, DeclaredLengthOverTheCapIsRefusedUnread) {
  HostileServer server([](int fd) { send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n[[[["); });
  HttpClient http(one_try());
  const std::string msg = kwheel::testing::error_of([&] { http.get(server.url(), false, 1 << 20); }, ErrorKind::network);
  EXPECT_NE(msg.find("larger than 1 MiB"), std::string::npos) << msg;
}

TEST(HttpCaps, EndlessUploadAnswerIsCutAtTheCap) {
  HostileServer server([](int fd) { endless(fd); });
  HttpClient http(one_try());
  std::vector<FormPart> form{{"name", "value", {}, {}, {}}};
  const std::string msg = kwheel::testing::error_of([&] { http.post_multipart(server.url(), form, 4096); }, ErrorKind::network);
  EXPECT_NE(msg.find("larger than 4 KiB"), std::string::npos) << msg;
}

TEST(HttpCaps, EndlessErrorAnswerToADownloadEndsTheTransfer) {
  // Before: the first 4 KiB were kept and the rest read forever.
  HostileServer server([](int fd) { endless(fd, "HTTP/1.1 404 Not Found"); });
  std::string dir_template = (std::filesystem::temp_directory_path() / "kwheel-http-test-XXXXXX").string();
  const std::filesystem::path dir = ::mkdtemp(dir_template.data());
  HttpClient http(one_try());
  DownloadJob job;
  job.url = server.url();
  job.partial = dir / "f.incomplete";
  job.dest = dir / "f";
  job.size = 10;
  job.label = "'f'";
  const std::string msg = kwheel::testing::error_of([&] { http.download({job}, 1); }, ErrorKind::not_found);
  EXPECT_NE(msg.find("HTTP 404"), std::string::npos) << msg;
  std::filesystem::remove_all(dir);
}

TEST(HttpCaps, DripBelowTheMinimumRateIsDropped) {
  // 10 bytes a second never trips a "no byte for N seconds" rule; it must
  // trip the minimum rate over --stall-timeout (1 s here).
  HostileServer server([](int fd) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")) return;
    while (send_all(fd, "[")) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  });
  HttpClient http(one_try());
  const std::string msg = kwheel::testing::error_of([&] { http.get(server.url()); }, ErrorKind::network);
  EXPECT_NE(msg.find(server.url()), std::string::npos) << msg;
  EXPECT_EQ(server.requests(), 1);
}

TEST(HttpCaps, DripAboveTheMinimumRateStillMeetsADeadline) {
  // 4 KiB/s passes the minimum rate, but the whole answer has until the
  // stall timeout plus its cap at 64 KiB/s (1 s + 1 s here), not 15 s.
  HostileServer server([](int fd) {
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Length: 61440\r\n\r\n")) return;
    while (send_all(fd, std::string(2048, ' '))) std::this_thread::sleep_for(std::chrono::milliseconds(500));
  });
  HttpClient http(one_try());
  const std::string msg = kwheel::testing::error_of([&] { http.get(server.url(), false, 64 << 10); }, ErrorKind::network);
  EXPECT_NE(msg.find("timed out"), std::string::npos) << msg;
}
