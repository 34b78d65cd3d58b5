#pragma once
// The Airflow task attempt a request belongs to, read from request metadata, and the trace id
// derived from it so that every Spark Connect operation of one attempt lands in one trace.
//
// An Airflow task passes its identity in the Spark Connect URL, e.g.
//   sc://proxy:15002/;x-airflow-dag-id=etl;x-airflow-task-id=load;x-airflow-run-id=...;x-airflow-try-number=2
// PySpark URL-unquotes those values and sends each as gRPC metadata; we do not unquote again
// (that would corrupt a literal '%').

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing {

// Request metadata as the proxy sees it, without gRPC types: keys lower-case as gRPC delivers
// them, a key may repeat. The views must outlive the call they are passed to, nothing more.
using MetadataEntry = std::pair<std::string_view, std::string_view>;
using MetadataView = std::span<const MetadataEntry>;

inline constexpr std::string_view kAirflowDagIdHeader = "x-airflow-dag-id";
inline constexpr std::string_view kAirflowTaskIdHeader = "x-airflow-task-id";
inline constexpr std::string_view kAirflowRunIdHeader = "x-airflow-run-id";
inline constexpr std::string_view kAirflowTryNumberHeader = "x-airflow-try-number";
inline constexpr std::string_view kAirflowMapIndexHeader = "x-airflow-map-index";

// Airflow's own limit on dag, task and run ids (airflow.models.base.ID_LEN); longer is not Airflow.
inline constexpr std::size_t kMaxAirflowIdLength = 250;
// Airflow stores try_number and map_index in 32-bit integer columns.
inline constexpr std::int64_t kMaxAirflowInteger = 2'147'483'647;

// The rules ParseAirflowIdentity applies to ids, for whoever else takes them (the trace view's
// filters). Dag and task ids: 1 to kMaxAirflowIdLength printable ASCII characters without spaces.
bool IsValidAirflowId(std::string_view id);
// Run ids: at most kMaxAirflowIdLength printable ASCII characters, spaces allowed (may be empty).
bool IsValidAirflowRunId(std::string_view id);

struct AirflowIdentity {
  std::string dag_id;
  std::string task_id;
  std::string run_id;           // empty when the client did not send one
  std::int64_t try_number = 1;  // Airflow counts attempts from 1
  std::int64_t map_index = -1;  // -1: not a mapped task instance

  bool operator==(const AirflowIdentity&) const = default;
};

// Why x-airflow-* metadata was ignored; bounded, for an invalid_airflow_identity{reason} counter.
enum class AirflowIdentityError : std::uint8_t {
  kIncomplete,       // some x-airflow-* headers, but no dag id or no task id
  kDuplicateHeader,  // one of the five headers given twice: ambiguous
  kBadDagId,         // longer than kMaxAirflowIdLength, or not printable ASCII without spaces
  kBadTaskId,        // same rules as the dag id
  kBadRunId,         // too long, or not printable ASCII (spaces allowed inside)
  kBadTryNumber,     // not a decimal number in [0, 2^31 - 1]
  kBadMapIndex,      // not -1 or a decimal number in [0, 2^31 - 1]
};

// "incomplete", "duplicate_header", "bad_dag_id", ...
std::string_view AirflowIdentityErrorName(AirflowIdentityError error);
std::ostream& operator<<(std::ostream& out, AirflowIdentityError error);

// Both empty: the request carried no x-airflow-* identity headers at all.
struct AirflowIdentityParse {
  std::optional<AirflowIdentity> identity;
  std::optional<AirflowIdentityError> error;  // headers were present but rejected
};

// Reads the five x-airflow-* headers. Values are trimmed of surrounding spaces and tabs; an empty
// value counts as absent. Any present but invalid field rejects the whole identity rather than
// guessing, because a wrong guess would merge different task attempts into one trace. Threads: pure.
AirflowIdentityParse ParseAirflowIdentity(MetadataView metadata);

// The canonical string DeriveTraceId() hashes, version 1. Strings are length-prefixed (byte count
// in decimal, ':'), so no two identities produce the same string; numbers are plain decimal:
//   "airflow-task-attempt/v1\n" <len>:<dag_id> "\n" <len>:<task_id> "\n" <len>:<run_id> "\n"
//   <try_number> "\n" <map_index> "\n"
// e.g. "airflow-task-attempt/v1\n3:etl\n4:load\n0:\n1\n-1\n". Without a run id, the same try of a
// task in different runs shares one key: clients should send x-airflow-run-id. Never change it: ids must stay
// stable across processes, replicas and releases; a new scheme needs a new "/v2" prefix.
std::string CanonicalTaskAttemptKey(const AirflowIdentity& identity);

// The first 16 bytes of SHA-256(CanonicalTaskAttemptKey(identity)). If those are all zeros (odds
// 2^-128) the last byte is set to 1, keeping the id valid and still deterministic. Threads: pure.
TraceId DeriveTraceId(const AirflowIdentity& identity);

// Bytes 16..23 of the same digest: the span id of the attempt's own "airflow.task" span when the
// task has no span context of its own (Airflow without OpenTelemetry). The Airflow plugin derives
// the same id, sends it as the traceparent's parent on every call and in its report, so the
// operations hang under the task span that the report creates. All zeros (odds 2^-64): last byte 1.
SpanId DeriveTaskSpanId(const AirflowIdentity& identity);

// airflow.dag_id, airflow.task_id, airflow.run_id (only when known), airflow.try_number (int),
// airflow.map_index (int).
std::vector<Attribute> ToAttributes(const AirflowIdentity& identity);

}  // namespace sparktrace::tracing
