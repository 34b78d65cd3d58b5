#include "cli/demo_port_probe.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace sparktrace::cli {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};

}  // namespace

Result<bool> ListenAddressInUse(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("expected HOST:PORT, got '" + host_port + "'");
  }
  std::string host = host_port.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string port = host_port.substr(colon + 1);

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  addrinfo* found = nullptr;
  if (const int status = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); status != 0) {
    return InvalidArgument("'" + host_port + "': " + gai_strerror(status));
  }
  const std::unique_ptr<addrinfo, AddrInfoDeleter> addresses(found);

  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) return Error{ErrorCode::kIo, std::string("socket: ") + std::strerror(errno)};
  const int on = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  const bool bound = bind(fd, found->ai_addr, found->ai_addrlen) == 0;
  const int bind_errno = errno;
  close(fd);
  if (bound) return false;
  if (bind_errno == EADDRINUSE) return true;
  return Error{ErrorCode::kIo, "bind " + host_port + ": " + std::strerror(bind_errno)};
}

}  // namespace sparktrace::cli
