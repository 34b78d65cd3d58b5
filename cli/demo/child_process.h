#pragma once
// ChildProcess: one `sparktrace <command>` started by `sparktrace demo` (the simulator, the proxy),
// owned so that it never outlives the demo.
//
// The child runs this very binary (/proc/self/exe, so a rebuild while the demo runs changes
// nothing), with stdin from /dev/null, stdout on a pipe that ReadLine() reads (the `listening ...`
// line), and stderr shared with the demo so its logs stay visible. It gets:
// - its own process group, so a terminal's Ctrl-C reaches only the demo, which then stops its
//   children in order (the proxy first, so that it exports its last spans against a live upstream);
// - PR_SET_PDEATHSIG SIGKILL, so it dies with the demo even when the demo is killed outright. The
//   signal fires when the *thread* that forked exits: spawn from the thread that lives longest (main);
// - an empty signal mask and the environment without SPARKTRACE_* variables (they would act as
//   fallbacks for flags the demo did not pass).
//
// Threads: one thread uses an object at a time. Ownership: the object owns the process; the
// destructor of a child still running kills it (SIGKILL) and reaps it, so no path leaves a
// process or a zombie behind. Call Stop() for a graceful end.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"

namespace sparktrace::cli::demo {

class ChildProcess {
 public:
  // Starts `/proc/self/exe` with `args` (argv[1..]; argv[0] is "sparktrace"). `name` ("proxy")
  // only labels errors. Fails when the pipe or the fork fails; an exec failure shows up as the
  // child exiting with code 127 (and a message on stderr).
  static Result<ChildProcess> Spawn(std::string name, const std::vector<std::string>& args);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  // The next line of the child's stdout, without its newline, waiting at most `timeout`. Fails
  // (kUnavailable) when the child exits or closes stdout first, saying how it ended, or when the
  // time runs out.
  Result<std::string> ReadLine(std::chrono::milliseconds timeout);

  // Ends the child: SIGTERM, up to `grace` for it to exit, then SIGKILL. Returns how it ended
  // ("exited with code 0", "killed by SIGKILL") and whether that was a clean exit (code 0). Calling
  // it again returns the same answer.
  struct Exit {
    std::string description;
    bool clean = false;
  };
  Exit Stop(std::chrono::milliseconds grace);

  // True once the child has exited (reaps it if so); never blocks.
  bool HasExited();

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }

 private:
  ChildProcess(std::string name, pid_t pid, int stdout_fd, int pidfd);
  // Waits up to `timeout` for the child to exit and reaps it; false if it is still running.
  bool WaitForExit(std::chrono::milliseconds timeout);
  void Reap(int wait_status);
  void KillAndReap();
  void CloseDescriptors();

  std::string name_;
  pid_t pid_ = -1;      // -1 when moved from
  bool reaped_ = true;  // no process to wait for (reaped, or moved from)
  int stdout_fd_ = -1;
  // A pidfd (Linux 5.3+) makes "wait for exit, with a timeout" a poll(); -1 where the kernel or a
  // seccomp profile refuses pidfd_open, and waits then poll waitpid(WNOHANG) instead.
  int pidfd_ = -1;
  std::string pending_output_;  // stdout read past the last line returned
  std::string exit_description_;
  bool exit_clean_ = false;
};

}  // namespace sparktrace::cli::demo
