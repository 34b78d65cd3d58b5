#include "proxy/status_names.h"

#include <array>

namespace sparktrace::proxy {

std::string_view StatusCodeName(StatusCode code) {
  static constexpr std::array<std::string_view, 17> kNames = {
      "OK",        "CANCELLED",         "UNKNOWN",          "INVALID_ARGUMENT",  "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS",    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",      "UNIMPLEMENTED",    "INTERNAL",          "UNAVAILABLE",
      "DATA_LOSS", "UNAUTHENTICATED"};
  const auto index = static_cast<std::size_t>(code);
  if (index < kNames.size()) return kNames[index];
  return "CODE_OTHER";
}

}  // namespace sparktrace::proxy
