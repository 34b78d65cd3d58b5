#include "tracing/connect/call_operation_id.h"

#include <array>
#include <iterator>

namespace sparktrace::tracing::connect {
namespace {

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx": 32 hex digits in groups of 8-4-4-4-12.
constexpr std::size_t kUuidTextLength = 36;
constexpr std::array<std::size_t, 4> kUuidHyphens = {8, 13, 18, 23};

bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

}  // namespace

std::string_view OperationIdHeaderIssueName(OperationIdHeaderIssue issue) {
  switch (issue) {
    case OperationIdHeaderIssue::kMalformed:
      return "malformed";
    case OperationIdHeaderIssue::kTooLong:
      return "too_long";
    case OperationIdHeaderIssue::kRepeated:
      return "repeated";
    case OperationIdHeaderIssue::kMismatch:
      return "mismatch";
  }
  return "malformed";
}

bool IsUuidText(std::string_view text) {
  if (text.size() != kUuidTextLength) return false;
  std::size_t next_hyphen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (next_hyphen < kUuidHyphens.size() && i == kUuidHyphens[next_hyphen]) {
      if (text[i] != '-') return false;
      ++next_hyphen;
    } else if (!IsHexDigit(text[i])) {
      return false;
    }
  }
  return true;
}

OperationIdHeader ReadOperationIdHeader(const proxy::ClientMetadata& metadata) {
  const auto [first, last] = metadata.equal_range(kOperationIdHeader);
  if (first == last) return {};
  if (std::next(first) != last) return {std::nullopt, OperationIdHeaderIssue::kRepeated};
  const std::string_view value = first->second;
  // Spark's server refuses an operation id that is not a UUID (INVALID_HANDLE.FORMAT), and its
  // clients only ever send one; anything longer is not worth reading, let alone copying.
  if (value.size() > kUuidTextLength) return {std::nullopt, OperationIdHeaderIssue::kTooLong};
  if (!IsUuidText(value)) return {std::nullopt, OperationIdHeaderIssue::kMalformed};
  return {std::string(value), std::nullopt};
}

CallOperationId ResolveCallOperationId(const std::optional<std::string>& header,
                                       const std::optional<std::string>& body) {
  // The body is what Spark acts on: a ReattachExecute whose header names operation A and whose
  // body names B reattaches to B on the server. Keying by the body keeps the spans where Spark's
  // execution (and its jobs, found by the body's id in their job tags) really is. The header only
  // stands in when the body named nothing: a message that could not be read (compressed with an
  // encoding the proxy cannot undo, or malformed), or a client that names the id only there.
  if (body && !body->empty()) return {body, false, header && *header != *body};
  if (header) return {header, true, false};
  return {};
}

}  // namespace sparktrace::tracing::connect
