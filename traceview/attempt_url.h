#pragma once
// The addresses of an attempt's page and JSON (docs/trace-view-api.md#pages): one encoder and one
// decoder, mirrored by web/assets/url_state.js (and by the Airflow plugin's extra link). Pure
// functions; thread-safe.
//
// An Airflow task attempt's ids travel in the query, never in the path:
//   /attempt?dag=<dag>&task=<task>&run=<run>&try=<try>[&map=<map index>]           the page
//   /api/v1/attempt?<the same>                                                      its JSON
//   /api/v1/attempt/chrome-trace.json?<the same>, /api/v1/attempt/otlp.json?<…>     its downloads
// Why not path segments: "." and ".." are valid Airflow task (and dag) ids, and a path segment "."
// or ".." is a dot segment that browsers, fetch(), curl and URL libraries remove before the request
// leaves (RFC 3986 5.2.4). Percent-encoding does not save it: the WHATWG URL standard reads "%2E"
// and "%2E%2E" as dot segments too. Proxies and ingresses in front of the admin port may also
// decode, merge or refuse "%2F" and "//" in a path, and run ids hold "/". A query is passed on as it
// is written: each value percent-encoded (all but A-Z a-z 0-9 - _ . ~, so "&", "=", "+", "#", "%",
// "/", spaces and every UTF-8 byte too) comes back byte for byte, and an empty run id is just
// "run=". An escaped path (a prefix character on every segment) would also avoid dot segments, but
// needs an escape of its own, reads worse and stays exposed to path rewriting.
//
// The earlier shape, /tasks/<dag>/<task>/<run>/<try>[?map_index=N] (and /api/v1/tasks/…), is still
// read, for links made before: it cannot address ids that are dot segments, or an empty run id.
// Traces without Airflow identity keep /traces/<trace id>: a trace id is 32 hex digits.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

inline constexpr std::string_view kAttemptPagePath = "/attempt";
inline constexpr std::string_view kAttemptApiPath = "/api/v1/attempt";
inline constexpr std::string_view kLegacyAttemptPagePrefix = "/tasks/";
inline constexpr std::string_view kLegacyAttemptApiPrefix = "/api/v1/tasks/";
inline constexpr std::string_view kTracePagePrefix = "/traces/";
inline constexpr std::string_view kTraceApiPrefix = "/api/v1/traces/";

// The query parameters that name an attempt, in the order they are written.
inline constexpr std::string_view kDagParameter = "dag";
inline constexpr std::string_view kTaskParameter = "task";
inline constexpr std::string_view kRunParameter = "run";
inline constexpr std::string_view kTryParameter = "try";
inline constexpr std::string_view kMapParameter = "map";                   // absent or empty: -1
inline constexpr std::string_view kLegacyMapIndexParameter = "map_index";  // of the earlier shape

// What an API address answers: the attempt's JSON, or one of its downloads (a last path segment).
enum class Download : std::uint8_t { kNone, kChromeTrace, kOtlp };
inline constexpr std::string_view kChromeTraceFile = "chrome-trace.json";
inline constexpr std::string_view kOtlpFile = "otlp.json";

// "dag=..&task=.&run=manual__2024%2F01%3Fa%23b&try=2&map=3" (map only when it is not -1).
std::string AttemptQuery(const tracing::store::TaskAttemptKey& key);
// "/attempt?" + AttemptQuery(key).
std::string AttemptPageHref(const tracing::store::TaskAttemptKey& key);
// "/api/v1/attempt[/chrome-trace.json|/otlp.json]?" + AttemptQuery(key).
std::string AttemptApiHref(const tracing::store::TaskAttemptKey& key, Download download = Download::kNone);
std::string TracePageHref(std::string_view trace_id);
std::string TraceApiHref(std::string_view trace_id, Download download = Download::kNone);

// The attempt a query names. dag, task, run and try must be there (dag, task and run may be empty
// strings: they are compared as they are, as UTF-8 of at most 250 characters), try and map as
// decimal integers in Airflow's ranges (query_values.h); other parameters (the page's view, a token)
// are ignored. kInvalidArgument, naming the parameter (never repeating its value), otherwise.
Result<tracing::store::TaskAttemptKey> ParseAttemptQuery(std::string_view query);

struct AttemptAddress {
  tracing::store::TaskAttemptKey key;
  Download download = Download::kNone;
};

// The attempt an API request names: `path` is the raw (undecoded) request path, either
// kAttemptApiPath[/<download>] with the ids in `query`, or the earlier
// /api/v1/tasks/<dag>/<task>/<run>/<try>[/<download>] with ?map_index=N. kInvalidArgument for a
// malformed address, kNotFound for a path that is neither.
Result<AttemptAddress> ParseAttemptApiPath(std::string_view path, std::string_view query);

// The last segment of a trace's SQL plan address: /api/v1/traces/<trace id>/sql-plan?span=<span id>
// (one spark.sql.execution span's plan, served on demand rather than in the attempt's JSON).
inline constexpr std::string_view kSqlPlanSegment = "sql-plan";

struct TraceAddress {
  std::string trace_id;  // as written (decoded); the caller checks that it is a trace id
  Download download = Download::kNone;
  bool sql_plan = false;  // .../sql-plan: the span named by the query's `span`
};

// "/api/v1/traces/<trace id>/sql-plan?span=<span id>".
std::string SqlPlanApiHref(std::string_view trace_id, std::string_view span_id);

// /api/v1/traces/<trace id>[/<download>|/sql-plan]; kInvalidArgument otherwise.
Result<TraceAddress> ParseTraceApiPath(std::string_view path);

}  // namespace sparktrace::traceview
