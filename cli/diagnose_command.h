#pragma once

#include <ostream>
#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace diagnose [--json] EVENTLOG_OR_DIR...`: reads Spark event logs offline (plain, zstd,
// lz4, snappy, .inprogress, rolling eventlog_v2_ directories; a directory argument is scanned for
// every application log in it) and prints, per application and per Spark Connect operation, the
// phase breakdown and the job/stage timeline. Returns the exit code: 0, 1 when some input could
// not be read (the others are still reported), 2 for bad arguments.
int RunDiagnoseCommand(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace sparktrace::cli
