#pragma once
// The span model every part of tracing shares: what the proxy and the listener produce, what the
// pipeline batches, and what the exporters (OTLP, SQLite) write. Plain values, no gRPC or
// protobuf types, so any module can include it.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace sparktrace::tracing {

// 16 and 8 bytes, as in W3C Trace Context and OTLP. All zeros is invalid.
using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// Lower-case hex, as in a traceparent header.
std::string ToHex(const TraceId& id);
std::string ToHex(const SpanId& id);
// The same digits appended to `out`: a traceparent is built per call without a string per id.
void AppendHex(const TraceId& id, std::string& out);
void AppendHex(const SpanId& id, std::string& out);
bool IsValid(const TraceId& id);
bool IsValid(const SpanId& id);
// 32 hex digits (either case) into a trace id; nullopt for anything else, including all zeros.
std::optional<TraceId> ParseTraceId(std::string_view hex);

// The OTLP attribute value kinds we use.
using AttributeValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;

struct Attribute {
  std::string key;
  AttributeValue value;
};

// The value of the first attribute named `key` that holds a T, or nullptr: for reading spans and
// span events back (reports, tests), never on the data path.
template <typename T>
const T* AttributeValueOf(const std::vector<Attribute>& attributes, std::string_view key) {
  for (const Attribute& attribute : attributes) {
    if (attribute.key != key) continue;
    if (const T* value = std::get_if<T>(&attribute.value)) return value;
  }
  return nullptr;
}

struct SpanEvent {
  std::string name;
  std::uint64_t time_unix_nano = 0;
  std::vector<Attribute> attributes;
};

// OTLP's Span.SpanKind numbering.
enum class SpanKind : std::uint8_t { kUnspecified = 0, kInternal = 1, kServer = 2, kClient = 3, kProducer = 4, kConsumer = 5 };

// OTLP's Status.StatusCode numbering.
enum class StatusCode : std::uint8_t { kUnset = 0, kOk = 1, kError = 2 };

struct Span {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zeros for a root span
  std::string trace_state;  // W3C tracestate, passed on as received
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  std::uint64_t start_time_unix_nano = 0;
  std::uint64_t end_time_unix_nano = 0;
  std::vector<Attribute> attributes;
  std::vector<SpanEvent> events;
  StatusCode status_code = StatusCode::kUnset;
  std::string status_message;
};

}  // namespace sparktrace::tracing
