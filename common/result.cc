#include "common/result.h"

namespace sparktrace {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kIo:
      return "io";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Error::ToString() const {
  std::string text(ErrorCodeName(code));
  text += ": ";
  text += message;
  return text;
}

}  // namespace sparktrace
