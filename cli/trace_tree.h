#pragma once
// Rendering of stored traces for `sparktrace traces show/list` and the admin JSON API: a span tree as
// indented text or JSON, and trace listings as a table or JSON. Output is deterministic (a given input
// always renders to the same bytes, whatever the input order), so it can be tested exactly and diffed.
//
// Threads: pure functions of their arguments.
//
// Tree order: a span sits under the span whose id is its parent id; siblings (and top-level spans)
// are ordered by start time, then span id. Top level holds the roots (no parent id) and the orphans
// (a parent id not among the spans, e.g. a parent not yet exported or one outside sparktrace); a
// parent cycle, which only malformed input has, is broken at its earliest span, shown as an orphan.
//
// Text of a trace (widths fixed so columns line up; µs/ms/s/m/h as fits, see FormatSpanDuration):
//   trace 0af7651916cd43dd8448eb211c80319c  2024-05-01T12:00:00.000000000Z  1.50s  4 spans, 1 error
//         +0s     1.50s    airflow.task  dag=etl task=load run=manual__1 try=1
//     +10.0ms     800ms      ExecutePlan  op=8f3c2a rows=100
//     +20.0ms     350ms        spark.job 3
//      +900ms    5.00ms  !   AnalyzePlan  error: boom
// columns: start offset from the trace's first start, duration, "!" for a span with error status,
// then the name indented two spaces per level and the key attributes (op, rows, bytes, dag, task,
// run, try: see tracing/span_vocabulary.h), "error" with the status message of an error span
// (quoted when it has spaces), and "[parent <id> missing]" for an orphan. "?" is the duration of a
// span that ends before it starts.
//
// JSON of a trace (RenderTraceJson), two-space indented:
//   {"trace_id": "<32 hex>",
//    "start_time_unix_nano": "<decimal>", "start_time": "<ISO-8601 UTC, ns>",
//    "end_time_unix_nano": "<decimal>",   "end_time": "<ISO-8601 UTC, ns>",
//    "duration_ns": <int>, "span_count": <int>, "error_count": <int>,
//    "spans": [ in tree order (depth first), each:
//      {"span_id": "<16 hex>", "parent_span_id": "<16 hex>" | null, "depth": <int>, "orphan": <bool>,
//       "name": "...", "kind": "unspecified|internal|server|client|producer|consumer",
//       "start_time_unix_nano": "...", "start_time": "...", "end_time_unix_nano": "...", "end_time": "...",
//       "offset_ns": <int>, "duration_ns": <int>,
//       "status": {"code": "unset|ok|error", "message": "..."},
//       "trace_state": "...", "attributes": {key: value, ...},
//       "events": [{"name": "...", "time_unix_nano": "...", "time": "...", "attributes": {...}}]}]}
// Unix nanoseconds are decimal strings, as in OTLP/JSON: they exceed 2^53, where JSON parsers that
// use doubles (JavaScript, jq 1.6) would round them. Durations and offsets stay numbers. An empty
// input gives a trace_id of null, zero times and no spans.
//
// JSON of a listing (RenderAttemptListJson): {"attempts": [ in input order, each:
//   {"name", "dag_id", "task_id", "run_id": string | null, "try_number": int | null,
//    "map_index": int | null, "state", "trace_ids": [hex…], "start_time_unix_nano", "start_time",
//    "end_time_unix_nano", "end_time", "duration_ns", "span_count", "error_count"}]}

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::cli {

struct TraceTreeRow {
  const tracing::Span* span = nullptr;  // points into the input of OrderTraceTree
  int depth = 0;               // 0 for top level
  bool orphan = false;         // top level only because its parent is missing
};

// The spans in tree order (depth first, as described above), each once. The rows point into `spans`,
// which must outlive them.
std::vector<TraceTreeRow> OrderTraceTree(std::span<const tracing::Span> spans);

// "0s", "850ns", "1.23µs", "12.3ms", "123ms", "1.50s", "59.9s", "2m05s", "1h02m": three significant
// digits below a minute, truncated rather than rounded so a value never shows its next unit's "1000".
std::string FormatSpanDuration(std::uint64_t nanos);

// "2024-05-01T12:00:00.123Z" for fraction_digits 3; 0 to 9 digits, truncated.
std::string FormatUnixNanoIso8601(std::uint64_t unix_nano, int fraction_digits);

// `spans`: the spans of one trace, in any order (as SqliteSpanStore::GetTrace returns them).
std::string RenderTraceText(std::span<const tracing::Span> spans);
std::string RenderTraceJson(std::span<const tracing::Span> spans);

// `summaries`: as SqliteSpanStore::ListTraces returns them; rendered in the order given.
// Text: a table with a header row (TRACE ID, START, DURATION, SPANS, ERRORS, ROOT, DAG, TASK, RUN,
// TRY), "-" for an unknown Airflow field; "no traces\n" when empty.
// One line of `sparktrace traces list`: an Airflow task attempt, whichever traces its spans are in
// (several attempts may share one trace), or a trace without Airflow identity.
struct AttemptListing {
  bool airflow = true;
  std::string name;  // "dag.task", or the application's / root span's name
  std::string dag_id;
  std::string task_id;
  std::string run_id;
  std::int64_t try_number = 0;
  std::int64_t map_index = -1;
  std::string state;  // running | failed | success
  std::vector<std::string> trace_ids;
  std::uint64_t start_time_unix_nano = 0;
  std::uint64_t end_time_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;
};
std::string RenderAttemptListText(std::span<const AttemptListing> attempts);
std::string RenderAttemptListJson(std::span<const AttemptListing> attempts);

}  // namespace sparktrace::cli
