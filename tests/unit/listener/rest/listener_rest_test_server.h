#pragma once
// A tiny HTTP/1.1 server on 127.0.0.1 (port 0: the kernel picks) for the REST feed tests: one
// thread, one connection at a time, answers GETs from a path → response table the test fills and
// changes between polls, then closes the connection. Records every request target.
//
// Threading: Set()/requests() from the test thread; the server thread serves. Stopped and joined by
// the destructor (a self-pipe wakes its poll()), so no test sleeps or leaks a thread.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace sparktrace::listener::rest::test {

struct TestResponse {
  int status = 200;
  std::string body;
  // Read the request, then never answer (until the client gives up or the server stops).
  bool never_answer = false;
  // No Content-Length: the body ends when the connection closes (HTTP/1.0 style).
  bool close_delimited = false;
};

class TestHttpServer {
 public:
  TestHttpServer() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::listen(listen_fd_, 16) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
        ::pipe2(wake_, O_CLOEXEC) != 0) {
      return;  // port() stays 0; the test asserts on it
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }

  ~TestHttpServer() {
    if (thread_.joinable()) {
      const char byte = 'x';
      [[maybe_unused]] const auto written = ::write(wake_[1], &byte, 1);
      thread_.join();
    }
    for (int fd : held_) ::close(fd);
    for (int fd : {listen_fd_, wake_[0], wake_[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }

  TestHttpServer(const TestHttpServer&) = delete;
  TestHttpServer& operator=(const TestHttpServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Answers GET `target` (path and query exactly as requested) with `response` from now on.
  void Set(const std::string& target, TestResponse response) {
    std::lock_guard lock(mutex_);
    routes_[target] = std::move(response);
  }
  void Set(const std::string& target, std::string body) {
    Set(target, TestResponse{200, std::move(body), false, false});
  }

  std::vector<std::string> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void Serve() {
    while (true) {
      pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0) continue;
      if (fds[1].revents != 0) return;
      if ((fds[0].revents & POLLIN) == 0) continue;
      const int connection = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) continue;
      if (!Answer(connection)) ::close(connection);
    }
  }

  // Serves one request; false when the connection is done with (to be closed).
  bool Answer(int connection) {
    std::string request;
    char chunk[4096];
    while (request.find("\r\n\r\n") == std::string::npos) {
      pollfd fds[2] = {{connection, POLLIN, 0}, {wake_[0], POLLIN, 0}};
      if (::poll(fds, 2, 5000) <= 0 || fds[1].revents != 0) return false;
      const ssize_t got = ::recv(connection, chunk, sizeof chunk, 0);
      if (got <= 0) return false;
      request.append(chunk, static_cast<std::size_t>(got));
    }
    // "GET /api/v1/applications HTTP/1.1"
    const std::size_t first_space = request.find(' ');
    const std::size_t second_space = request.find(' ', first_space + 1);
    const std::string target = request.substr(first_space + 1, second_space - first_space - 1);
    TestResponse response{404, "{\"message\":\"no such path\"}", false, false};
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(target);
      if (auto route = routes_.find(target); route != routes_.end()) response = route->second;
    }
    if (response.never_answer) {
      held_.push_back(connection);  // closed by the destructor
      return true;
    }
    const std::string head =
        "HTTP/1.1 " + std::to_string(response.status) + " Test\r\n" +
        "Content-Type: application/json\r\nContent-Length: " + std::to_string(response.body.size()) +
        "\r\nConnection: close\r\n\r\n";
    const std::string bytes = head + response.body;
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      // A client that refuses the body closes early: MSG_NOSIGNAL turns SIGPIPE into an error.
      const ssize_t wrote = ::send(connection, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (wrote <= 0) break;
      sent += static_cast<std::size_t>(wrote);
    }
    ::shutdown(connection, SHUT_WR);
    return false;
  }

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::vector<int> held_;  // server thread only, until the destructor
  mutable std::mutex mutex_;
  std::map<std::string, TestResponse> routes_;
  std::vector<std::string> requests_;
};

// A port on 127.0.0.1 that nothing listens on (bound, then closed again).
inline std::uint16_t UnusedLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace sparktrace::listener::rest::test
