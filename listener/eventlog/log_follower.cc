#include "listener/eventlog/log_follower.h"

namespace sparktrace::listener::eventlog {

std::string_view LogStateName(LogState state) {
  switch (state) {
    case LogState::kInProgress:
      return "in_progress";
    case LogState::kComplete:
      return "complete";
    case LogState::kFailed:
      return "failed";
    case LogState::kUnsupported:
      return "unsupported";
  }
  return "unknown";
}

}  // namespace sparktrace::listener::eventlog
