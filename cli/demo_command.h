#pragma once

#include <ostream>
#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace demo [flags]` (what `make run` runs): starts the simulator and the proxy as child
// processes on loopback, makes an Airflow task's Spark Connect calls through the proxy, prints the
// trace they left in the store, and serves until SIGINT/SIGTERM (`--once`: exits instead).
// Returns the exit code: 0 after a clean run, 1 when something failed (a child did not start or
// ended badly, a call misbehaved, the trace did not arrive), 2 on bad flags, 130 when stopped by a
// signal before the trace was printed.
int RunDemoCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace sparktrace::cli
