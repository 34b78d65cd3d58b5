// `sparktrace-loadgen server`: the benchmark's upstream.
#pragma once

#include "flags.h"

namespace sparktrace::loadgen {

// Serves until SIGINT/SIGTERM; prints "listening PORT" once ready. `signal_fd` comes from
// BlockTerminationSignals(). Returns the process exit code.
int RunServer(const ServerOptions& options, int signal_fd);

}  // namespace sparktrace::loadgen
