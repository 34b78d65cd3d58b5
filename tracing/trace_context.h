#pragma once
// W3C Trace Context, Level 1 (https://www.w3.org/TR/trace-context/): reading the client's
// traceparent and tracestate, writing the traceparent injected into the upstream call, and
// deciding which trace a request belongs to.
//
// Threads: everything here is a pure function of its arguments (plus the injected IdGenerator and
// Sampler, which are thread-safe), callable from any proxy worker. Malformed input never throws: it
// yields a reason from a small enum, fit for a metric label.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "tracing/airflow_identity.h"
#include "tracing/id_generator.h"
#include "tracing/sampler.h"
#include "tracing/span.h"

namespace sparktrace::tracing {

inline constexpr std::string_view kTraceparentHeader = "traceparent";
inline constexpr std::string_view kTracestateHeader = "tracestate";

inline constexpr std::uint8_t kSampledFlag = 0x01;
// "00-" + 32 + "-" + 16 + "-" + 2: the whole of a version 00 header, the known prefix of later ones.
inline constexpr std::size_t kTraceparentLength = 55;
// Level 1 limits.
inline constexpr std::size_t kMaxTracestateMembers = 32;
inline constexpr std::size_t kMaxTracestateValueLength = 256;

struct Traceparent {
  std::uint8_t version = 0;
  TraceId trace_id{};
  SpanId parent_span_id{};
  std::uint8_t flags = 0;  // as received; Level 1 defines only kSampledFlag, other bits are ignored

  bool sampled() const { return (flags & kSampledFlag) != 0; }
};

// Why a traceparent was ignored; prints as the word used in invalid_traceparent{reason}.
enum class TraceparentError : std::uint8_t {
  kEmpty,                  // header present with an empty value
  kMultipleHeaders,        // more than one traceparent: which one is meant is unknowable
  kSurroundingWhitespace,  // leading or trailing space/tab; header values are not trimmed
  kBadLength,              // version 00 not exactly 55 chars; any version shorter than 55
  kBadVersion,             // version is not two hex digits
  kForbiddenVersion,       // version ff, which the spec reserves as invalid
  kBadSeparator,           // a '-' missing where one belongs (also after a later version's flags)
  kUpperCaseHex,           // A-F: the spec allows lower-case hex only
  kBadTraceId,             // non-hex in the trace id
  kZeroTraceId,            // all zeros
  kBadParentId,            // non-hex in the parent id
  kZeroParentId,           // all zeros
  kBadFlags,               // non-hex in the flags
};

// "empty", "multiple_headers", "surrounding_whitespace", "bad_length", "bad_version",
// "forbidden_version", "bad_separator", "upper_case_hex", "bad_trace_id", "zero_trace_id",
// "bad_parent_id", "zero_parent_id", "bad_flags".
std::string_view TraceparentErrorName(TraceparentError error);
std::ostream& operator<<(std::ostream& out, TraceparentError error);

// A Traceparent or the reason there is none; shaped like Result<T>, but the error is the bounded
// enum rather than free text.
class [[nodiscard]] TraceparentResult {
 public:
  TraceparentResult(Traceparent value) : value_(value) {}       // NOLINT(google-explicit-constructor)
  TraceparentResult(TraceparentError error) : error_(error) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Traceparent& value() const { return value_.value(); }
  const Traceparent& operator*() const { return value(); }
  const Traceparent* operator->() const { return &value(); }
  // Only meaningful when !ok().
  TraceparentError error() const { return error_; }

 private:
  std::optional<Traceparent> value_;
  TraceparentError error_ = TraceparentError::kEmpty;
};

// Parses one traceparent value. Version 00 must be exactly 55 chars. A later version (01..fe) must
// be at least 55 chars; its first 55 are parsed as version 00 and anything after must start with
// '-' (fields a later version may add, which we do not interpret).
TraceparentResult ParseTraceparent(std::string_view value);

// "00-<trace id>-<span id>-01" (or -00 when not sampled): always version 00, as Level 1 requires of
// a vendor that forwards a context it may not fully understand.
std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled);

// Why a tracestate was dropped; prints as the word used in invalid_tracestate{reason}.
enum class TracestateError : std::uint8_t {
  kTooManyMembers,  // more than 32 non-empty list members
  kMissingEquals,   // a member that is not key=value
  kBadKey,          // not a simple-key or tenant@system key
  kBadValue,        // empty, longer than 256, or a char outside printable ASCII minus ',' and '='
  kDuplicateKey,    // a key given twice
};

// "too_many_members", "missing_equals", "bad_key", "bad_value", "duplicate_key".
std::string_view TracestateErrorName(TracestateError error);
std::ostream& operator<<(std::ostream& out, TracestateError error);

// Checks a (combined) tracestate against the Level 1 grammar; nullopt when valid. Empty and
// whitespace-only members are tolerated and do not count toward the 32; spaces and tabs around
// members are allowed (OWS), around '=' they are not.
std::optional<TracestateError> ValidateTracestate(std::string_view value);

// Where a request's trace came from.
enum class TraceOrigin : std::uint8_t {
  kClient,   // the client's valid traceparent
  kAirflow,  // derived from the Airflow task attempt (DeriveTraceId)
  kNew,      // started here with a random id
};
inline constexpr std::size_t kTraceOriginCount = 3;

// "client", "airflow", "new".
std::string_view TraceOriginName(TraceOrigin origin);

// The trace context of one request: what its spans hang under.
struct RequestTraceContext {
  TraceId trace_id{};
  SpanId parent_span_id{};  // the client's span; all zeros (our span is a root) unless kClient
  bool sampled = false;
  std::string tracestate;  // the client's, combined, passed on as received; empty if none or dropped
  TraceOrigin origin = TraceOrigin::kNew;

  bool from_client() const { return origin == TraceOrigin::kClient; }
};

// What the client sent in traceparent/tracestate, with the reasons for anything ignored.
struct ClientTraceContext {
  std::optional<RequestTraceContext> context;         // set for a valid traceparent (origin kClient)
  std::optional<TraceparentError> traceparent_error;  // a traceparent arrived and was ignored
  std::optional<TracestateError> tracestate_error;    // a tracestate arrived and was dropped
};

// Reads traceparent and tracestate from request metadata. Several tracestate entries are combined
// with ',' (as HTTP combines repeated headers). As the spec requires, tracestate is only looked at
// when the traceparent is valid; an invalid tracestate is dropped and the traceparent kept.
// `context->sampled` is the client's flag.
ClientTraceContext ExtractClientContext(MetadataView metadata);

// The trace a request belongs to: the client's valid traceparent wins (sampled by its flag); else,
// with an Airflow identity, the trace derived from the task attempt; else a new random trace. The
// last two are sampled by `sampler` from the trace id, so all operations of one Airflow task attempt
// get the same decision. `ids` is only used for a new trace.
RequestTraceContext ResolveTraceContext(const ClientTraceContext& client,
                                        const std::optional<AirflowIdentity>& airflow, IdGenerator& ids,
                                        const Sampler& sampler);

}  // namespace sparktrace::tracing
