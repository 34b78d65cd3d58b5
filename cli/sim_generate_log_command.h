#pragma once

#include <ostream>
#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace sim generate-log [flags]`: writes one complete simulated Spark event log in virtual
// time (no server, no waiting) and prints its path. Exit 0 on success, 1 when the log cannot be
// written, 2 on bad flags.
int RunSimGenerateLogCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace sparktrace::cli
