#include "tracing/otlp/encoder.h"

#include <cstdint>
#include <type_traits>

#include "tracing/otlp/proto_writer.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::otlp {
namespace {

// Field numbers are facts of the OTLP protocol (opentelemetry-proto, package
// opentelemetry.proto.*.v1). Each constant names its message and field.

// collector/trace/v1/trace_service.proto
constexpr std::uint32_t kRequestResourceSpans = 1;  // ExportTraceServiceRequest.resource_spans

// resource/v1/resource.proto
constexpr std::uint32_t kResourceAttributes = 1;  // Resource.attributes

// trace/v1/trace.proto
constexpr std::uint32_t kResourceSpansResource = 1;    // ResourceSpans.resource
constexpr std::uint32_t kResourceSpansScopeSpans = 2;  // ResourceSpans.scope_spans
constexpr std::uint32_t kScopeSpansScope = 1;          // ScopeSpans.scope
constexpr std::uint32_t kScopeSpansSpans = 2;          // ScopeSpans.spans
constexpr std::uint32_t kSpanTraceId = 1;              // Span.trace_id (bytes, 16)
constexpr std::uint32_t kSpanSpanId = 2;               // Span.span_id (bytes, 8)
constexpr std::uint32_t kSpanTraceState = 3;           // Span.trace_state
constexpr std::uint32_t kSpanParentSpanId = 4;         // Span.parent_span_id (bytes, 8)
constexpr std::uint32_t kSpanName = 5;                 // Span.name
constexpr std::uint32_t kSpanKind = 6;                 // Span.kind (enum Span.SpanKind)
constexpr std::uint32_t kSpanStartTimeUnixNano = 7;    // Span.start_time_unix_nano (fixed64)
constexpr std::uint32_t kSpanEndTimeUnixNano = 8;      // Span.end_time_unix_nano (fixed64)
constexpr std::uint32_t kSpanAttributes = 9;           // Span.attributes
constexpr std::uint32_t kSpanEvents = 11;              // Span.events
constexpr std::uint32_t kSpanStatus = 15;              // Span.status
constexpr std::uint32_t kEventTimeUnixNano = 1;        // Span.Event.time_unix_nano (fixed64)
constexpr std::uint32_t kEventName = 2;                // Span.Event.name
constexpr std::uint32_t kEventAttributes = 3;          // Span.Event.attributes
constexpr std::uint32_t kStatusMessage = 2;            // Status.message (1 is reserved)
constexpr std::uint32_t kStatusCode = 3;               // Status.code (enum Status.StatusCode)

// common/v1/common.proto
constexpr std::uint32_t kScopeName = 1;         // InstrumentationScope.name
constexpr std::uint32_t kScopeVersion = 2;      // InstrumentationScope.version
constexpr std::uint32_t kKeyValueKey = 1;       // KeyValue.key
constexpr std::uint32_t kKeyValueValue = 2;     // KeyValue.value
constexpr std::uint32_t kAnyValueString = 1;    // AnyValue.string_value (oneof value)
constexpr std::uint32_t kAnyValueBool = 2;      // AnyValue.bool_value
constexpr std::uint32_t kAnyValueInt = 3;       // AnyValue.int_value (int64)
constexpr std::uint32_t kAnyValueDouble = 4;    // AnyValue.double_value
constexpr std::uint32_t kAnyValueArray = 5;     // AnyValue.array_value
constexpr std::uint32_t kArrayValueValues = 1;  // ArrayValue.values

// Non-oneof scalars at their proto3 default are left out, as protobuf itself serializes them, so
// a decoder re-encoding our bytes gets the same bytes back. AnyValue's oneof members are always
// written: an empty string or a zero is a value there, and leaving it out would lose it.
void WriteAnyValue(ProtoWriter& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          out.Bytes(kAnyValueString, v);
        } else if constexpr (std::is_same_v<V, bool>) {
          out.Bool(kAnyValueBool, v);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          out.Int64(kAnyValueInt, v);
        } else if constexpr (std::is_same_v<V, double>) {
          out.Double(kAnyValueDouble, v);
        } else {
          static_assert(std::is_same_v<V, std::vector<std::string>>);
          out.Message(kAnyValueArray, [&v](ProtoWriter& array) {
            for (const std::string& element : v) {
              array.Message(kArrayValueValues,
                            [&element](ProtoWriter& any) { any.Bytes(kAnyValueString, element); });
            }
          });
        }
      },
      value);
}

void WriteAttributes(ProtoWriter& out, std::uint32_t field, const std::vector<Attribute>& attributes) {
  for (const Attribute& attribute : attributes) {
    // A whole SQL plan (up to --sql-plan-max-bytes) is for the store and the trace view: collectors
    // cap attribute values far below it (docs/tracing.md, "SQL executions"); the top operators,
    // span events, still go.
    if (attribute.key == kSparkSqlPlanKey) continue;
    out.Message(field, [&attribute](ProtoWriter& key_value) {
      if (!attribute.key.empty()) key_value.Bytes(kKeyValueKey, attribute.key);
      key_value.Message(kKeyValueValue,
                        [&attribute](ProtoWriter& any) { WriteAnyValue(any, attribute.value); });
    });
  }
}

std::string_view AsBytes(const auto& id) {
  return std::string_view(reinterpret_cast<const char*>(id.data()), id.size());
}

void WriteSpan(ProtoWriter& out, const Span& span) {
  out.Bytes(kSpanTraceId, AsBytes(span.trace_id));
  out.Bytes(kSpanSpanId, AsBytes(span.span_id));
  if (!span.trace_state.empty()) out.Bytes(kSpanTraceState, span.trace_state);
  // A root span has no parent: OTLP wants the field absent (empty), not eight zero bytes.
  if (IsValid(span.parent_span_id)) out.Bytes(kSpanParentSpanId, AsBytes(span.parent_span_id));
  if (!span.name.empty()) out.Bytes(kSpanName, span.name);
  if (span.kind != SpanKind::kUnspecified) out.Varint(kSpanKind, static_cast<std::uint64_t>(span.kind));
  if (span.start_time_unix_nano != 0) out.Fixed64(kSpanStartTimeUnixNano, span.start_time_unix_nano);
  if (span.end_time_unix_nano != 0) out.Fixed64(kSpanEndTimeUnixNano, span.end_time_unix_nano);
  WriteAttributes(out, kSpanAttributes, span.attributes);
  for (const SpanEvent& event : span.events) {
    out.Message(kSpanEvents, [&event](ProtoWriter& e) {
      if (event.time_unix_nano != 0) e.Fixed64(kEventTimeUnixNano, event.time_unix_nano);
      if (!event.name.empty()) e.Bytes(kEventName, event.name);
      WriteAttributes(e, kEventAttributes, event.attributes);
    });
  }
  if (span.status_code != StatusCode::kUnset || !span.status_message.empty()) {
    out.Message(kSpanStatus, [&span](ProtoWriter& status) {
      if (!span.status_message.empty()) status.Bytes(kStatusMessage, span.status_message);
      if (span.status_code != StatusCode::kUnset)
        status.Varint(kStatusCode, static_cast<std::uint64_t>(span.status_code));
    });
  }
}

}  // namespace

OtlpEncoder::OtlpEncoder(std::vector<Attribute> resource_attributes, std::string_view scope_version)
    : resource_attributes_(std::move(resource_attributes)) {
  ProtoWriter resource;
  WriteAttributes(resource, kResourceAttributes, resource_attributes_);
  encoded_resource_ = resource.Release();
  ProtoWriter scope;
  scope.Bytes(kScopeName, kOtlpScopeName);
  if (!scope_version.empty()) scope.Bytes(kScopeVersion, scope_version);
  encoded_scope_ = scope.Release();
}

std::string OtlpEncoder::Encode(std::span<const Span> spans) const {
  ProtoWriter request;
  request.Message(kRequestResourceSpans, [&](ProtoWriter& resource_spans) {
    resource_spans.Bytes(kResourceSpansResource, encoded_resource_);
    resource_spans.Message(kResourceSpansScopeSpans, [&](ProtoWriter& scope_spans) {
      scope_spans.Bytes(kScopeSpansScope, encoded_scope_);
      for (const Span& span : spans) {
        scope_spans.Message(kScopeSpansSpans, [&span](ProtoWriter& out) { WriteSpan(out, span); });
      }
    });
  });
  return request.Release();
}

}  // namespace sparktrace::tracing::otlp
