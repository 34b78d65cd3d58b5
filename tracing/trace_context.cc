#include "tracing/trace_context.h"

#include <array>
#include <ostream>
#include <utility>
#include <vector>

#include "common/text_trim.h"

namespace sparktrace::tracing {
namespace {

// Field offsets in "vv-<32 trace id>-<16 parent id>-ff".
constexpr std::size_t kTraceIdOffset = 3;
constexpr std::size_t kParentIdOffset = 36;
constexpr std::size_t kFlagsOffset = 53;

enum class HexStatus : std::uint8_t { kOk, kUpperCase, kNotHex };

int LowerHexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Decodes 2 × N lower-case hex digits. Upper-case A-F is told apart from other junk because it is
// a common client mistake worth its own metric label; a field with both counts as junk.
template <std::size_t N>
HexStatus DecodeHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  HexStatus status = HexStatus::kOk;
  for (char c : hex.substr(0, 2 * N)) {
    if (LowerHexDigit(c) >= 0) continue;
    if (c < 'A' || c > 'F') return HexStatus::kNotHex;
    status = HexStatus::kUpperCase;
  }
  if (status != HexStatus::kOk) return status;
  for (std::size_t i = 0; i < N; ++i) {
    out[i] = static_cast<std::uint8_t>((LowerHexDigit(hex[2 * i]) << 4) | LowerHexDigit(hex[2 * i + 1]));
  }
  return status;
}

bool IsLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
// The characters allowed after the first in every part of a tracestate key.
bool IsKeyChar(char c) { return IsLcAlpha(c) || IsDigit(c) || c == '_' || c == '-' || c == '*' || c == '/'; }

// Checks `part`: 1..max_length chars, the first passing first_ok, the rest IsKeyChar.
template <typename FirstCharPredicate>
bool IsKeyPart(std::string_view part, std::size_t max_length, FirstCharPredicate first_ok) {
  if (part.empty() || part.size() > max_length || !first_ok(part.front())) return false;
  for (char c : part.substr(1)) {
    if (!IsKeyChar(c)) return false;
  }
  return true;
}

// key = simple-key / multi-tenant-key
// simple-key = lcalpha 0*255( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
// multi-tenant-key = tenant-id "@" system-id
// tenant-id = ( lcalpha / DIGIT ) 0*240( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
// system-id = lcalpha 0*13( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
bool IsValidTracestateKey(std::string_view key) {
  const std::size_t at = key.find('@');
  if (at == std::string_view::npos) return IsKeyPart(key, 256, IsLcAlpha);
  return IsKeyPart(key.substr(0, at), 241, [](char c) { return IsLcAlpha(c) || IsDigit(c); }) &&
         IsKeyPart(key.substr(at + 1), 14, IsLcAlpha);  // a second '@' fails here, as not a key char
}

// value = 0*255(chr) nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E; chr = %x20 / nblk-chr
bool IsValidTracestateValue(std::string_view value) {
  if (value.empty() || value.size() > kMaxTracestateValueLength || value.back() == ' ') return false;
  for (char c : value) {
    if (c < 0x20 || c > 0x7e || c == ',' || c == '=') return false;
  }
  return true;
}

}  // namespace

std::string_view TraceparentErrorName(TraceparentError error) {
  switch (error) {
    case TraceparentError::kEmpty:
      return "empty";
    case TraceparentError::kMultipleHeaders:
      return "multiple_headers";
    case TraceparentError::kSurroundingWhitespace:
      return "surrounding_whitespace";
    case TraceparentError::kBadLength:
      return "bad_length";
    case TraceparentError::kBadVersion:
      return "bad_version";
    case TraceparentError::kForbiddenVersion:
      return "forbidden_version";
    case TraceparentError::kBadSeparator:
      return "bad_separator";
    case TraceparentError::kUpperCaseHex:
      return "upper_case_hex";
    case TraceparentError::kBadTraceId:
      return "bad_trace_id";
    case TraceparentError::kZeroTraceId:
      return "zero_trace_id";
    case TraceparentError::kBadParentId:
      return "bad_parent_id";
    case TraceparentError::kZeroParentId:
      return "zero_parent_id";
    case TraceparentError::kBadFlags:
      return "bad_flags";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, TraceparentError error) {
  return out << TraceparentErrorName(error);
}

TraceparentResult ParseTraceparent(std::string_view value) {
  if (value.empty()) return TraceparentError::kEmpty;
  if (IsBlank(value.front()) || IsBlank(value.back())) return TraceparentError::kSurroundingWhitespace;
  if (value.size() < kTraceparentLength) return TraceparentError::kBadLength;

  Traceparent parsed;
  std::array<std::uint8_t, 1> byte{};
  switch (DecodeHex(value.substr(0, 2), byte)) {
    case HexStatus::kOk:
      break;
    case HexStatus::kUpperCase:
      return TraceparentError::kUpperCaseHex;
    case HexStatus::kNotHex:
      return TraceparentError::kBadVersion;
  }
  parsed.version = byte[0];
  if (parsed.version == 0xff) return TraceparentError::kForbiddenVersion;
  if (parsed.version == 0x00 && value.size() != kTraceparentLength) return TraceparentError::kBadLength;
  // A later version may append fields, but only after a '-': "01-...-01-what" is fine, "01-...-01x" is
  // not (that would be a three-character flags field).
  if (value.size() > kTraceparentLength && value[kTraceparentLength] != '-') {
    return TraceparentError::kBadSeparator;
  }
  if (value[kTraceIdOffset - 1] != '-' || value[kParentIdOffset - 1] != '-' ||
      value[kFlagsOffset - 1] != '-') {
    return TraceparentError::kBadSeparator;
  }

  switch (DecodeHex(value.substr(kTraceIdOffset, 32), parsed.trace_id)) {
    case HexStatus::kOk:
      break;
    case HexStatus::kUpperCase:
      return TraceparentError::kUpperCaseHex;
    case HexStatus::kNotHex:
      return TraceparentError::kBadTraceId;
  }
  switch (DecodeHex(value.substr(kParentIdOffset, 16), parsed.parent_span_id)) {
    case HexStatus::kOk:
      break;
    case HexStatus::kUpperCase:
      return TraceparentError::kUpperCaseHex;
    case HexStatus::kNotHex:
      return TraceparentError::kBadParentId;
  }
  switch (DecodeHex(value.substr(kFlagsOffset, 2), byte)) {
    case HexStatus::kOk:
      break;
    case HexStatus::kUpperCase:
      return TraceparentError::kUpperCaseHex;
    case HexStatus::kNotHex:
      return TraceparentError::kBadFlags;
  }
  parsed.flags = byte[0];
  if (!IsValid(parsed.trace_id)) return TraceparentError::kZeroTraceId;
  if (!IsValid(parsed.parent_span_id)) return TraceparentError::kZeroParentId;
  return parsed;
}

std::string FormatTraceparent(const TraceId& trace_id, const SpanId& span_id, bool sampled) {
  std::string header;
  header.reserve(kTraceparentLength);
  header += "00-";
  AppendHex(trace_id, header);
  header += '-';
  AppendHex(span_id, header);
  header += sampled ? "-01" : "-00";
  return header;
}

std::string_view TracestateErrorName(TracestateError error) {
  switch (error) {
    case TracestateError::kTooManyMembers:
      return "too_many_members";
    case TracestateError::kMissingEquals:
      return "missing_equals";
    case TracestateError::kBadKey:
      return "bad_key";
    case TracestateError::kBadValue:
      return "bad_value";
    case TracestateError::kDuplicateKey:
      return "duplicate_key";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, TracestateError error) {
  return out << TracestateErrorName(error);
}

std::optional<TracestateError> ValidateTracestate(std::string_view value) {
  // Keys seen so far, for the duplicate check: at most 32, so a linear scan beats a set.
  std::array<std::string_view, kMaxTracestateMembers> keys;
  std::size_t members = 0;
  while (true) {
    const std::size_t comma = value.find(',');
    const std::string_view member = TrimBlanks(value.substr(0, comma));
    if (!member.empty()) {
      if (members == kMaxTracestateMembers) return TracestateError::kTooManyMembers;
      const std::size_t equals = member.find('=');
      if (equals == std::string_view::npos) return TracestateError::kMissingEquals;
      const std::string_view key = member.substr(0, equals);
      if (!IsValidTracestateKey(key)) return TracestateError::kBadKey;
      if (!IsValidTracestateValue(member.substr(equals + 1))) return TracestateError::kBadValue;
      for (std::size_t i = 0; i < members; ++i) {
        if (keys[i] == key) return TracestateError::kDuplicateKey;
      }
      keys[members++] = key;
    }
    if (comma == std::string_view::npos) return std::nullopt;
    value.remove_prefix(comma + 1);
  }
}

std::string_view TraceOriginName(TraceOrigin origin) {
  switch (origin) {
    case TraceOrigin::kClient:
      return "client";
    case TraceOrigin::kAirflow:
      return "airflow";
    case TraceOrigin::kNew:
      return "new";
  }
  return "unknown";
}

ClientTraceContext ExtractClientContext(MetadataView metadata) {
  std::optional<std::string_view> traceparent;
  std::size_t traceparent_count = 0;
  std::vector<std::string_view> tracestates;
  for (const auto& [key, value] : metadata) {
    if (key == kTraceparentHeader) {
      traceparent = value;
      ++traceparent_count;
    } else if (key == kTracestateHeader) {
      tracestates.push_back(value);
    }
  }

  ClientTraceContext client;
  if (traceparent_count == 0) return client;
  if (traceparent_count > 1) {
    client.traceparent_error = TraceparentError::kMultipleHeaders;
    return client;
  }
  const TraceparentResult parsed = ParseTraceparent(*traceparent);
  if (!parsed.ok()) {
    client.traceparent_error = parsed.error();
    return client;
  }

  RequestTraceContext& context = client.context.emplace();
  context.trace_id = parsed->trace_id;
  context.parent_span_id = parsed->parent_span_id;
  context.sampled = parsed->sampled();
  context.origin = TraceOrigin::kClient;
  std::string tracestate;
  for (std::size_t i = 0; i < tracestates.size(); ++i) {
    if (i > 0) tracestate += ',';
    tracestate += tracestates[i];
  }
  if (const std::optional<TracestateError> error = ValidateTracestate(tracestate)) {
    client.tracestate_error = *error;
  } else {
    context.tracestate = std::move(tracestate);
  }
  return client;
}

RequestTraceContext ResolveTraceContext(const ClientTraceContext& client,
                                        const std::optional<AirflowIdentity>& airflow, IdGenerator& ids,
                                        const Sampler& sampler) {
  if (client.context.has_value()) {
    RequestTraceContext context = *client.context;
    context.sampled = sampler.ShouldSample(context.trace_id, context.sampled);
    return context;
  }
  RequestTraceContext context;
  if (airflow.has_value()) {
    context.trace_id = DeriveTraceId(*airflow);
    context.origin = TraceOrigin::kAirflow;
  } else {
    context.trace_id = ids.NewTraceId();
    context.origin = TraceOrigin::kNew;
  }
  context.sampled = sampler.ShouldSample(context.trace_id, std::nullopt);
  return context;
}

}  // namespace sparktrace::tracing
