#pragma once
// Which Spark Connect operation an ExecutePlan, ReattachExecute or ReleaseExecute call names: the
// `spark-connect-operation-id` request header newer clients send, and the request body's
// operation_id (docs/tracing.md, "Operation spans").
//
// Spark's Scala and Python clients put the operation id in that header on exactly these three RPCs
// (SPARK-58632, SparkConnectClient.OPERATION_ID_HEADER in apache/spark master, the 4.3 line; the 4.0
// and 4.1 clients do not send it).
// Its value is the ExecutePlanRequest.operation_id the client generated: a UUID string.
//
// Threads: pure functions; call them from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proxy/call_observer.h"

namespace sparktrace::tracing::connect {

inline constexpr std::string_view kOperationIdHeader = "spark-connect-operation-id";

// Why a header value was not used to key the operation. Small and fixed: a metric label.
enum class OperationIdHeaderIssue : std::uint8_t {
  kMalformed,  // not a UUID string
  kTooLong,    // longer than any UUID string: not even looked at
  kRepeated,   // sent more than once: which one the client meant is unclear
  kMismatch,   // valid, but the request body names another operation (the body wins)
};
inline constexpr std::size_t kOperationIdHeaderIssueCount = 4;

// "malformed", "too_long", "repeated", "mismatch".
std::string_view OperationIdHeaderIssueName(OperationIdHeaderIssue issue);

struct OperationIdHeader {
  std::optional<std::string> id;  // a valid value, when one came
  std::optional<OperationIdHeaderIssue> issue;
};

// The header among the client's request headers: absent (both fields empty), valid, or ignored
// for a reason.
OperationIdHeader ReadOperationIdHeader(const proxy::ClientMetadata& metadata);

// The 36-character text form of a UUID, in either case ("00112233-4455-6677-8899-aabbccddeeff"),
// as both of Spark's clients write it.
bool IsUuidText(std::string_view text);

struct CallOperationId {
  std::optional<std::string> id;
  bool from_header = false;  // the body named none: the header's value is used
  bool mismatch = false;     // header and body disagree; `id` is the body's
};

// The operation a call names: the body's operation_id, else the header's. They normally agree;
// when they do not, the body wins, because Spark's server keys its execution by the body and never
// reads the header (see the .cc).
CallOperationId ResolveCallOperationId(const std::optional<std::string>& header,
                                       const std::optional<std::string>& body);

}  // namespace sparktrace::tracing::connect
