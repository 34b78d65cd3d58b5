#pragma once
// A raw loopback HTTP client for the admin server's tests: exact bytes out, whole answers back,
// every wait bounded by a socket timeout (no sleeps).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>
#include <utility>

namespace sparktrace::admin::test_client {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and headers
  std::string body;
};

// The value of a header in a response head ("" when absent).
inline std::string HeaderValue(const std::string& head, const std::string& name) {
  const auto at = head.find("\r\n" + name + ": ");
  if (at == std::string::npos) return "";
  const auto start = at + name.size() + 4;
  return head.substr(start, head.find("\r\n", start) - start);
}

class RawConnection {
 public:
  // Connects to "127.0.0.1:PORT"; every send and receive waits at most `timeout_seconds`.
  explicit RawConnection(const std::string& address, int timeout_seconds = 5) {
    const auto colon = address.rfind(':');
    sockaddr_in server{};
    server.sin_family = AF_INET;
    server.sin_port = htons(static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1))));
    inet_pton(AF_INET, address.substr(0, colon).c_str(), &server.sin_addr);
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval timeout{timeout_seconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&server), sizeof(server)) == 0;
  }
  ~RawConnection() { Close(); }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  // False when the peer closed (or reset) before all of it went out.
  bool Send(const std::string& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One whole answer: the head, then Content-Length bytes of body (none for 1xx/204/304 or HEAD);
  // without Content-Length, the body is what comes until EOF. status 0: closed or timed out first.
  RawResponse ReadResponse(bool head_request = false) {
    RawResponse response;
    std::size_t head_end = std::string::npos;
    while ((head_end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return response;
    }
    response.head = buffer_.substr(0, head_end);
    buffer_.erase(0, head_end + 4);
    if (response.head.size() < 12) return response;
    response.status = std::stoi(response.head.substr(9, 3));
    const std::string length = HeaderValue(response.head, "Content-Length");
    const bool no_body = head_request || response.status < 200 || response.status == 204 || response.status == 304;
    if (no_body) return response;
    if (length.empty()) {
      while (Fill()) {
      }
      response.body = std::exchange(buffer_, std::string());
      return response;
    }
    const auto size = static_cast<std::size_t>(std::stoull(length));
    while (buffer_.size() < size) {
      if (!Fill()) {
        response.status = 0;  // cut short
        return response;
      }
    }
    response.body = buffer_.substr(0, size);
    buffer_.erase(0, size);
    return response;
  }

  // True when the server closed the connection (EOF or reset) within the timeout, with nothing more
  // sent; false when bytes came or the wait timed out.
  bool ClosedByPeer() {
    if (!buffer_.empty()) return false;
    char byte = 0;
    const ssize_t n = recv(fd_, &byte, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno == ECONNRESET;
    buffer_.push_back(byte);
    return false;
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  bool Fill() {
    char chunk[16384];
    const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string buffer_;
};

// One HTTP/1.0 request over a fresh connection (the server closes it after the answer), with the
// server's own address as Host.
inline RawResponse Send(const std::string& address, const std::string& method, const std::string& target,
                        const std::string& body = "", const std::string& extra_headers = "") {
  RawConnection connection(address);
  if (!connection.connected()) return {};
  connection.Send(method + " " + target + " HTTP/1.0\r\nHost: " + address +
                  "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body);
  return connection.ReadResponse(method == "HEAD");
}

}  // namespace sparktrace::admin::test_client
