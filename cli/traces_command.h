#pragma once

#include <ostream>
#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace traces list [--dag ID] [--task ID] [--run ID] [--limit N] [--json]` and
// `sparktrace traces show TRACE_ID | --operation OPERATION_ID [--json]`, reading the embedded
// store (--store, default sparktrace.db). Returns the exit code: 0, 1 when the store or the trace
// cannot be read or found, 2 for bad arguments.
int RunTracesCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace sparktrace::cli
