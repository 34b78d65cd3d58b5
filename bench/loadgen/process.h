// Process plumbing: file-descriptor limit, termination signals, waiting, own CPU time.
#pragma once

namespace sparktrace::loadgen {

// Raises the soft RLIMIT_NOFILE to the hard limit (a thousand streams through nginx means a
// thousand upstream connections).
void RaiseFdLimit();

// Ignores SIGPIPE and blocks SIGINT/SIGTERM in this thread, so every thread created afterwards
// inherits the mask, and returns a signalfd that becomes readable when one arrives (-1 on error).
// Call before the first gRPC object is created.
int BlockTerminationSignals();

enum class WakeReason { kSignal, kStdinClosed, kTimeout };

// Waits until a signal arrives on `signal_fd`, standard input reaches end of file (when
// `watch_stdin`), or `max_s` seconds pass.
WakeReason WaitForSignalOrEof(int signal_fd, bool watch_stdin, double max_s);

const char* WakeReasonName(WakeReason reason);

// User + system CPU seconds used by this process so far.
double OwnCpuSeconds();

}  // namespace sparktrace::loadgen
