#include "spark_connect/decode_status.h"

namespace sparktrace::spark_connect {

std::string_view DecodeStatusName(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::kOk:
      return "ok";
    case DecodeStatus::kNotDecoded:
      return "not_decoded";
    case DecodeStatus::kTruncated:
      return "truncated";
    case DecodeStatus::kMalformed:
      return "malformed";
    case DecodeStatus::kWrongWireType:
      return "wrong_wire_type";
    case DecodeStatus::kTooDeep:
      return "too_deep";
  }
  return "unknown";
}

bool IsDecodeFailure(DecodeStatus status) {
  return status != DecodeStatus::kOk && status != DecodeStatus::kNotDecoded;
}

}  // namespace sparktrace::spark_connect
