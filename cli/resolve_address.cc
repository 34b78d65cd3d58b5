#include "cli/resolve_address.h"

#include <sys/socket.h>

namespace sparktrace::cli {

Result<ResolvedAddress> ResolveHostPort(const std::string& host_port, int ai_flags) {
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
  hints.ai_flags = AI_NUMERICSERV | ai_flags;
  addrinfo* found = nullptr;
  if (const int status = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); status != 0) {
    return InvalidArgument("'" + host_port + "': " + gai_strerror(status));
  }
  return ResolvedAddress(found);
}

}  // namespace sparktrace::cli
