#include "tracing/otlp/response.h"

#include "tracing/otlp/proto_reader.h"

namespace sparktrace::tracing::otlp {
namespace {

// collector/trace/v1/trace_service.proto (opentelemetry-proto >= 0.18)
constexpr std::uint32_t kResponsePartialSuccess = 1;       // ExportTraceServiceResponse.partial_success
constexpr std::uint32_t kPartialSuccessRejectedSpans = 1;  // ExportTracePartialSuccess.rejected_spans (int64)
constexpr std::uint32_t kPartialSuccessErrorMessage = 2;   // ExportTracePartialSuccess.error_message

// googleapis google/rpc/status.proto, google/rpc/error_details.proto, and protobuf's any.proto and
// duration.proto: the shape gRPC's rich error model and the OTLP/HTTP error body use.
constexpr std::uint32_t kRpcStatusCode = 1;     // google.rpc.Status.code (int32)
constexpr std::uint32_t kRpcStatusMessage = 2;  // google.rpc.Status.message
constexpr std::uint32_t kRpcStatusDetails = 3;  // google.rpc.Status.details (repeated Any)
constexpr std::uint32_t kAnyTypeUrl = 1;       // google.protobuf.Any.type_url
constexpr std::uint32_t kAnyValue = 2;         // google.protobuf.Any.value
constexpr std::uint32_t kRetryInfoDelay = 1;   // google.rpc.RetryInfo.retry_delay
constexpr std::uint32_t kDurationSeconds = 1;  // google.protobuf.Duration.seconds (int64)
constexpr std::uint32_t kDurationNanos = 2;    // google.protobuf.Duration.nanos (int32)
constexpr std::string_view kRetryInfoTypeSuffix = "/google.rpc.RetryInfo";

// Calls `on_field` for each field; stops at the first malformed byte.
template <typename OnField>
Result<void> ForEachField(std::string_view bytes, OnField&& on_field) {
  ProtoReader reader(bytes);
  while (true) {
    auto field = reader.Next();
    if (!field.ok()) return field.error();
    if (!field->has_value()) return {};
    auto handled = on_field(**field);
    if (!handled.ok()) return handled.error();
  }
}

Result<std::chrono::nanoseconds> ParseDuration(std::string_view bytes) {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
  auto parsed = ForEachField(bytes, [&](const ProtoField& field) -> Result<void> {
    if (field.type != WireType::kVarint) return {};
    if (field.number == kDurationSeconds) seconds = static_cast<std::int64_t>(field.number_value);
    // int32 is sign-extended to 64 bits on the wire; the cast back recovers it.
    if (field.number == kDurationNanos) nanos = static_cast<std::int32_t>(field.number_value);
    return {};
  });
  if (!parsed.ok()) return parsed.error();
  // A negative or absurd delay (over a day) is no advice we can follow; clamp rather than fail.
  constexpr std::int64_t kMaxSeconds = 86400;
  if (seconds < 0 || (seconds == 0 && nanos < 0)) return std::chrono::nanoseconds(0);
  if (seconds > kMaxSeconds) seconds = kMaxSeconds;
  return std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos);
}

}  // namespace

Result<OtlpPartialSuccess> ParseExportTraceServiceResponse(std::string_view bytes) {
  OtlpPartialSuccess result;
  auto parsed = ForEachField(bytes, [&](const ProtoField& field) -> Result<void> {
    if (field.number != kResponsePartialSuccess || field.type != WireType::kLengthDelimited) return {};
    return ForEachField(field.bytes, [&](const ProtoField& inner) -> Result<void> {
      if (inner.number == kPartialSuccessRejectedSpans && inner.type == WireType::kVarint) {
        result.rejected_spans = static_cast<std::int64_t>(inner.number_value);
      } else if (inner.number == kPartialSuccessErrorMessage && inner.type == WireType::kLengthDelimited) {
        result.error_message = std::string(inner.bytes);
      }
      return {};
    });
  });
  if (!parsed.ok()) return parsed.error();
  return result;
}

Result<RpcStatus> ParseRpcStatus(std::string_view bytes) {
  RpcStatus status;
  auto parsed = ForEachField(bytes, [&](const ProtoField& field) -> Result<void> {
    if (field.number == kRpcStatusCode && field.type == WireType::kVarint) {
      status.code = static_cast<std::int32_t>(field.number_value);
    } else if (field.number == kRpcStatusMessage && field.type == WireType::kLengthDelimited) {
      status.message = std::string(field.bytes);
    } else if (field.number == kRpcStatusDetails && field.type == WireType::kLengthDelimited) {
      std::string_view type_url;
      std::string_view value;
      auto any = ForEachField(field.bytes, [&](const ProtoField& inner) -> Result<void> {
        if (inner.type != WireType::kLengthDelimited) return {};
        if (inner.number == kAnyTypeUrl) type_url = inner.bytes;
        if (inner.number == kAnyValue) value = inner.bytes;
        return {};
      });
      if (!any.ok()) return any.error();
      if (!type_url.ends_with(kRetryInfoTypeSuffix)) return {};
      // RetryInfo present with no delay field still means "retry", after no particular wait.
      status.retry_delay = std::chrono::nanoseconds(0);
      return ForEachField(value, [&](const ProtoField& inner) -> Result<void> {
        if (inner.number != kRetryInfoDelay || inner.type != WireType::kLengthDelimited) return {};
        auto delay = ParseDuration(inner.bytes);
        if (!delay.ok()) return delay.error();
        status.retry_delay = *delay;
        return {};
      });
    }
    return {};
  });
  if (!parsed.ok()) return parsed.error();
  return status;
}

}  // namespace sparktrace::tracing::otlp
