#pragma once

#include <ostream>
#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace ui --store PATH [--listen HOST:PORT] [--admin-token TOKEN]`: the trace view over an
// existing store file (a copy taken from a pod, a CI artifact), without a proxy. Prints
// `trace view http://HOST:PORT/` on stdout when ready and serves until SIGINT/SIGTERM. Returns the
// exit code: 0 after a signal, 1 when the store cannot be read or the address bound, 2 for bad flags.
int RunUiCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace sparktrace::cli
