#include "proxy/listen_sockets.h"

#include <charconv>
#include <cstring>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace sparktrace::proxy {
namespace {

constexpr int kBacklog = 1024;

class AddressInfo {
 public:
  ~AddressInfo() {
    if (info_ != nullptr) freeaddrinfo(info_);
  }
  addrinfo* info_ = nullptr;
};

int BoundSocket(const addrinfo* address, int port, bool reuse_port) {
  sockaddr_storage storage{};
  std::memcpy(&storage, address->ai_addr, address->ai_addrlen);
  if (storage.ss_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(&storage)->sin_port = htons(static_cast<std::uint16_t>(port));
  } else {
    reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port = htons(static_cast<std::uint16_t>(port));
  }
  const int fd = socket(address->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (bind(fd, reinterpret_cast<sockaddr*>(&storage), address->ai_addrlen) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length);
  return bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                    : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
}

}  // namespace

bool SplitHostPort(const std::string& address, std::string* host, int* port) {
  const std::size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  *host = address.substr(0, colon);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  const auto [parsed_end, error] = std::from_chars(begin, end, *port);
  return error == std::errc() && parsed_end == end && *port >= 0 && *port <= 65535;
}

Result<ListenSockets> OpenListenSockets(const std::string& listen_address, int count) {
  std::string host;
  int port = 0;
  if (!SplitHostPort(listen_address, &host, &port)) {
    return Error{ErrorCode::kInvalidArgument, "bad address " + listen_address};
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  AddressInfo resolved;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &resolved.info_) != 0 ||
      resolved.info_ == nullptr) {
    return Error{ErrorCode::kIo, "cannot resolve " + listen_address};
  }
  const addrinfo* address = resolved.info_;
  const Error in_use{ErrorCode::kIo, "cannot listen on " + listen_address + " (address in use or not local?)"};

  // A socket without SO_REUSEPORT cannot bind an address that any other socket holds: binding
  // one first is how an address already used by another process is told apart. It also picks
  // the port when the configured one is 0.
  const int probe = BoundSocket(address, port, /*reuse_port=*/false);
  if (probe < 0) return in_use;
  const int bound_port = BoundPort(probe);
  close(probe);

  ListenSockets sockets;
  for (int i = 0; i < count; ++i) {
    const int fd = BoundSocket(address, bound_port, /*reuse_port=*/true);
    if (fd < 0 || listen(fd, kBacklog) != 0) {
      if (fd >= 0) close(fd);
      for (const int opened : sockets.fds) close(opened);
      return in_use;
    }
    sockets.fds.push_back(fd);
  }
  const bool v6 = address->ai_family == AF_INET6;
  sockets.address = (v6 ? "[" + host + "]" : host) + ":" + std::to_string(bound_port);
  return sockets;
}

}  // namespace sparktrace::proxy
