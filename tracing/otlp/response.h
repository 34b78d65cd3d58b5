#pragma once
// Decoders for what a collector answers: the ExportTraceServiceResponse (its partial_success
// says how many spans were rejected) and the google.rpc.Status carried by a failed gRPC call's
// status details or an OTLP/HTTP error body (its RetryInfo says when to try again).
// Pure functions over bytes; any thread.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::tracing::otlp {

// ExportTracePartialSuccess; both fields zero/empty when the collector took everything.
struct OtlpPartialSuccess {
  std::int64_t rejected_spans = 0;
  std::string error_message;
};

// google.rpc.Status with the one detail we act on.
struct RpcStatus {
  std::int32_t code = 0;
  std::string message;
  // google.rpc.RetryInfo.retry_delay, when a detail carries one.
  std::optional<std::chrono::nanoseconds> retry_delay;
};

// Serialized opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse. Empty input is
// a full success.
Result<OtlpPartialSuccess> ParseExportTraceServiceResponse(std::string_view bytes);

// Serialized google.rpc.Status (grpc-status-details-bin, or an OTLP/HTTP error body).
Result<RpcStatus> ParseRpcStatus(std::string_view bytes);

}  // namespace sparktrace::tracing::otlp
