#pragma once

#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace sim [flags]`: serves the Spark Connect protocol simulator until SIGTERM/SIGINT.
// Returns the exit code: 0 after a clean stop, 1 when it cannot listen, 2 on bad flags.
int RunSimCommand(std::span<const std::string> args);

}  // namespace sparktrace::cli
