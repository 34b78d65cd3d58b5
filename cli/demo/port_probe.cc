#include "cli/demo/port_probe.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/resolve_address.h"

namespace sparktrace::cli::demo {

Result<bool> ListenAddressInUse(const std::string& host_port) {
  auto addresses = ResolveHostPort(host_port, AI_PASSIVE);
  if (!addresses.ok()) return addresses.error();
  const addrinfo* found = addresses->get();

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

}  // namespace sparktrace::cli::demo
