#include "cli/demo/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>
#include <utility>

#include "common/units.h"

namespace sparktrace::cli::demo {
namespace {

// A `listening ...` line is short; anything longer is not the line we wait for.
constexpr std::size_t kMaxLineBytes = 4096;

std::string SystemError(std::string_view what) { return std::string(what) + ": " + std::strerror(errno); }

// Milliseconds left until `deadline`, rounded up so that a poll never wakes just before it.
int MillisecondsUntil(std::chrono::steady_clock::time_point deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

// Runs in the forked child, where only async-signal-safe calls are allowed (the parent may have
// other threads, whose locks the child inherits held). Never returns.
[[noreturn]] void ExecChild(char* const* argv, char* const* envp, int stdin_fd, int stdout_fd, pid_t parent) {
  setpgid(0, 0);
  // The parent may have died between fork() and prctl(); then no signal would ever come.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the demo blocks the signals it sigwaits for
  if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(stdout_fd, STDOUT_FILENO) < 0) _exit(127);
  execve("/proc/self/exe", argv, envp);
  constexpr std::string_view kExecFailed = "sparktrace demo: cannot execute /proc/self/exe\n";
  [[maybe_unused]] const auto ignored = write(STDERR_FILENO, kExecFailed.data(), kExecFailed.size());
  _exit(127);
}

}  // namespace

Result<ChildProcess> ChildProcess::Spawn(std::string name, const std::vector<std::string>& args) {
  // Everything the child needs is built before fork(): after it, the child may not allocate.
  std::vector<std::string> argv_storage;
  argv_storage.reserve(args.size() + 1);
  argv_storage.emplace_back("sparktrace");
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  argv.reserve(argv_storage.size() + 1);
  for (auto& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!std::string_view(*entry).starts_with("SPARKTRACE_")) envp.push_back(*entry);
  }
  envp.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Error{ErrorCode::kIo, SystemError("pipe for " + name)};
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) {
    const std::string message = SystemError("/dev/null");
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Error{ErrorCode::kIo, message};
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) ExecChild(argv.data(), envp.data(), devnull, pipe_fds[1], parent);
  const std::string fork_error = pid < 0 ? SystemError("fork for " + name) : "";
  close(pipe_fds[1]);
  close(devnull);
  if (pid < 0) {
    close(pipe_fds[0]);
    return Error{ErrorCode::kIo, fork_error};
  }
  // Also here, so that the group exists before the parent signals it, whichever runs first.
  setpgid(pid, pid);
  // Through syscall(): Debian 12's <sys/pidfd.h> declares pidfd_open without C linkage.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return ChildProcess(std::move(name), pid, pipe_fds[0], pidfd);
}

ChildProcess::ChildProcess(std::string name, pid_t pid, int stdout_fd, int pidfd)
    : name_(std::move(name)), pid_(pid), reaped_(false), stdout_fd_(stdout_fd), pidfd_(pidfd) {}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : name_(std::move(other.name_)),
      pid_(std::exchange(other.pid_, -1)),
      reaped_(std::exchange(other.reaped_, true)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      pending_output_(std::move(other.pending_output_)),
      exit_description_(std::move(other.exit_description_)),
      exit_clean_(other.exit_clean_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    if (!reaped_) KillAndReap();
    CloseDescriptors();
    name_ = std::move(other.name_);
    pid_ = std::exchange(other.pid_, -1);
    reaped_ = std::exchange(other.reaped_, true);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    pending_output_ = std::move(other.pending_output_);
    exit_description_ = std::move(other.exit_description_);
    exit_clean_ = other.exit_clean_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  if (!reaped_) KillAndReap();
  CloseDescriptors();
}

Result<std::string> ChildProcess::ReadLine(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (const auto newline = pending_output_.find('\n'); newline != std::string::npos) {
      std::string line = pending_output_.substr(0, newline);
      pending_output_.erase(0, newline + 1);
      return line;
    }
    if (pending_output_.size() > kMaxLineBytes) {
      return Error{ErrorCode::kUnavailable, name_ + " printed more than " + std::to_string(kMaxLineBytes) +
                                                " bytes without a newline"};
    }
    const int wait_ms = MillisecondsUntil(deadline);
    if (wait_ms == 0) {
      return Error{ErrorCode::kUnavailable,
                   name_ + " printed no line on stdout within " + FormatDuration(timeout)};
    }
    pollfd readable{stdout_fd_, POLLIN, 0};
    const int ready = poll(&readable, 1, wait_ms);
    if (ready < 0 && errno != EINTR) return Error{ErrorCode::kIo, SystemError("poll " + name_ + " stdout")};
    if (ready <= 0) continue;
    char buffer[1024];
    const ssize_t got = read(stdout_fd_, buffer, sizeof buffer);
    if (got > 0) {
      pending_output_.append(buffer, static_cast<std::size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return Error{ErrorCode::kIo, SystemError("read " + name_ + " stdout")};
    // End of file: the child closed stdout, which for our children means it is exiting.
    const bool exited = WaitForExit(std::chrono::seconds(2));
    return Error{ErrorCode::kUnavailable, name_ + (exited ? " " + exit_description_ : " closed its stdout") +
                                              " before printing a line"};
  }
}

ChildProcess::Exit ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (!reaped_) {
    kill(pid_, SIGTERM);
    if (!WaitForExit(grace)) {
      KillAndReap();
      exit_description_ += " after ignoring SIGTERM for " + FormatDuration(grace);
    }
  }
  return Exit{exit_description_, exit_clean_};
}

bool ChildProcess::HasExited() { return WaitForExit(std::chrono::milliseconds(0)); }

bool ChildProcess::WaitForExit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!reaped_) {
    int wait_status = 0;
    const pid_t done = waitpid(pid_, &wait_status, WNOHANG);
    if (done == pid_) {
      Reap(wait_status);
      break;
    }
    if (done < 0 && errno != EINTR) {
      // ECHILD: only possible if someone else reaped it; it is gone either way.
      reaped_ = true;
      exit_description_ = "ended (its exit status was lost: " + SystemError("waitpid") + ")";
      break;
    }
    const int wait_ms = MillisecondsUntil(deadline);
    if (wait_ms == 0) return false;
    if (pidfd_ >= 0) {
      pollfd exited{pidfd_, POLLIN, 0};  // readable once the child has exited
      poll(&exited, 1, wait_ms);
    } else {
      poll(nullptr, 0, std::min(wait_ms, 10));  // no pidfd: look again every 10ms
    }
  }
  return true;
}

void ChildProcess::Reap(int wait_status) {
  reaped_ = true;
  if (WIFEXITED(wait_status)) {
    exit_clean_ = WEXITSTATUS(wait_status) == 0;
    exit_description_ = "exited with code " + std::to_string(WEXITSTATUS(wait_status));
  } else if (WIFSIGNALED(wait_status)) {
    const int signal_number = WTERMSIG(wait_status);
    const char* signal_name = sigabbrev_np(signal_number);
    exit_description_ =
        "was killed by " + (signal_name != nullptr ? std::string("SIG") + signal_name
                                                   : "signal " + std::to_string(signal_number));
  } else {
    exit_description_ = "ended with wait status " + std::to_string(wait_status);
  }
  if (pidfd_ >= 0) close(std::exchange(pidfd_, -1));
}

void ChildProcess::KillAndReap() {
  kill(pid_, SIGKILL);
  int wait_status = 0;
  pid_t done = -1;
  do {
    done = waitpid(pid_, &wait_status, 0);
  } while (done < 0 && errno == EINTR);
  if (done == pid_) {
    Reap(wait_status);
  } else {
    reaped_ = true;
    exit_description_ = "was killed (its exit status was lost)";
  }
}

void ChildProcess::CloseDescriptors() {
  if (stdout_fd_ >= 0) close(std::exchange(stdout_fd_, -1));
  if (pidfd_ >= 0) close(std::exchange(pidfd_, -1));
}

}  // namespace sparktrace::cli::demo
