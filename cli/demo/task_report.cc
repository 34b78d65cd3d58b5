#include "cli/demo/task_report.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "tracing/airflow/airflow_task_route.h"
#include "cli/resolve_address.h"
#include "common/unique_fd.h"

namespace sparktrace::cli::demo {
namespace {

Result<UniqueFd> Connect(const std::string& host_port, std::chrono::milliseconds timeout) {
  auto addresses = ResolveHostPort(host_port, 0);
  if (!addresses.ok()) return addresses.error();
  const addrinfo* found = addresses->get();
  UniqueFd fd(socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol));
  if (fd.get() < 0) return Error{ErrorCode::kIo, std::string("socket: ") + std::strerror(errno)};
  // The proxy is local: a blocking connect is short. Sends and reads are bounded by the timeout.
  timeval limit{};
  limit.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  limit.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  if (connect(fd.get(), found->ai_addr, found->ai_addrlen) != 0) {
    return Error{ErrorCode::kUnavailable, "connect " + host_port + ": " + std::strerror(errno)};
  }
  return fd;
}

Result<void> SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t sent = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return Error{ErrorCode::kUnavailable, std::string("send: ") + std::strerror(errno)};
    data.remove_prefix(static_cast<std::size_t>(sent));
  }
  return {};
}

// The whole answer (the server closes the connection after it), at most 4 KiB of it.
Result<std::string> ReadAnswer(int fd) {
  std::string answer;
  char buffer[512];
  while (answer.size() < 4096) {
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      return Error{ErrorCode::kUnavailable, std::string("reading the answer: ") + std::strerror(errno)};
    if (got == 0) break;
    answer.append(buffer, static_cast<std::size_t>(got));
  }
  if (answer.empty()) return Error{ErrorCode::kUnavailable, "no answer from the proxy's admin port"};
  return answer;
}

}  // namespace

Result<void> SendAirflowTaskReport(const std::string& admin_address, const tracing::AirflowTaskReport& report,
                                   std::chrono::milliseconds timeout) {
  auto fd = Connect(admin_address, timeout);
  if (!fd.ok()) return fd.error();
  const std::string body = tracing::AirflowTaskReportJson(report);
  const std::string request =
      "POST " + std::string(tracing::airflow::kAirflowTaskReportPath) + " HTTP/1.1\r\nHost: " + admin_address +
      "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  if (auto sent = SendAll(fd->get(), request); !sent.ok()) return sent.error();
  auto answer = ReadAnswer(fd->get());
  if (!answer.ok()) return answer.error();
  if (answer->rfind("HTTP/1.1 202", 0) == 0) return {};
  const auto head_end = answer->find("\r\n\r\n");
  const std::string status_line = answer->substr(0, answer->find("\r\n"));
  const std::string answer_body = head_end == std::string::npos ? "" : answer->substr(head_end + 4, 200);
  return Error{ErrorCode::kUnavailable, "the proxy answered " + status_line + ": " + answer_body};
}

}  // namespace sparktrace::cli::demo
