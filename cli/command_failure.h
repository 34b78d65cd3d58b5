#pragma once
// How a subcommand reports a failure: one line, "sparktrace <command>: <message>", on its error
// stream, and the exit status it returns (2 for a bad command line, 1 for a failure while running).

#include <ostream>
#include <string_view>

namespace sparktrace::cli {

// Writes the line and returns `code`, so that a command can `return FailCommand(err, "ui", 2, …)`.
inline int FailCommand(std::ostream& err, std::string_view command, int code, std::string_view message) {
  err << "sparktrace " << command << ": " << message << "\n";
  return code;
}

}  // namespace sparktrace::cli
