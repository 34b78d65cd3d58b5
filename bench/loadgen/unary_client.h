// `client --mode unary`: closed-loop unary calls, latency percentiles and call rate.
#pragma once

#include "flags.h"

namespace sparktrace::loadgen {

// Runs the load and prints one JSON line. Returns the process exit code.
int RunUnaryClient(const ClientOptions& options);

}  // namespace sparktrace::loadgen
