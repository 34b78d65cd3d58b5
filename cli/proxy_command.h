#pragma once

#include <span>
#include <string>

namespace sparktrace::cli {

// `sparktrace proxy [flags]`: runs until SIGTERM/SIGINT, then drains. Returns the exit code:
// 0 after a clean drain, 1 on a runtime failure (e.g. cannot listen), 2 on bad flags.
int RunProxyCommand(std::span<const std::string> args);

}  // namespace sparktrace::cli
