#include "process.h"

#include <poll.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>

namespace sparktrace::loadgen {

void RaiseFdLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

int BlockTerminationSignals() {
  std::signal(SIGPIPE, SIG_IGN);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  if (pthread_sigmask(SIG_BLOCK, &set, nullptr) != 0) return -1;
  return signalfd(-1, &set, SFD_CLOEXEC);
}

WakeReason WaitForSignalOrEof(int signal_fd, bool watch_stdin, double max_s) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(static_cast<long long>(max_s * 1000));
  bool stdin_open = watch_stdin;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return WakeReason::kTimeout;
    pollfd fds[2] = {{signal_fd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
    int rc = poll(fds, stdin_open ? 2 : 1, static_cast<int>(left < 1000 ? left : 1000));
    if (rc < 0) {
      if (errno == EINTR) continue;
      return WakeReason::kTimeout;
    }
    if (signal_fd >= 0 && (fds[0].revents & POLLIN)) return WakeReason::kSignal;
    if (stdin_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
      char buf[256];
      ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return WakeReason::kStdinClosed;
    }
  }
}

const char* WakeReasonName(WakeReason reason) {
  switch (reason) {
    case WakeReason::kSignal: return "signal";
    case WakeReason::kStdinClosed: return "stdin-closed";
    case WakeReason::kTimeout: return "hold-max";
  }
  return "?";
}

double OwnCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace sparktrace::loadgen
