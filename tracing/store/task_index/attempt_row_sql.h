#pragma once
// SQL text both task-index backends share: how an attempt's row is updated when its parts are added
// up again. The backends differ only in the name of the two-argument maximum.
//
// Pure function; thread-safe.

#include <cstddef>
#include <string>
#include <string_view>

namespace sparktrace::tracing::store {

// "ON CONFLICT (key) DO UPDATE SET ..." of the attempt row's upsert (the row arrives as `excluded`).
// The sums are replaced and the settled figures (task_attempts.h) stay; indexed_at, the row's version,
// moves only when a sum changed (a new trace adds its spans to the count), so that the spans of other
// attempts written to a shared trace do not keep this one from ever being quiet, and it only grows.
// `greatest`: "max" (SQLite), "GREATEST" (PostgreSQL).
std::string AttemptRowUpsertSql(std::string_view greatest);

// kAttemptRowColumns (index_columns.h) as both backends read them from task_attempts named `row`, the
// trace ids as each row keeps them: an attempt without identity's one trace is its trace key (its
// trace_ids is ''), and an Airflow attempt's traces are its parts' (SQLite schema 12, PostgreSQL schema
// 6), `trace_list` aggregating `p.trace_id` over them in ascending order: "group_concat(p.trace_id,
// ',')" (SQLite, which visits the parts in their key's order), "string_agg(p.trace_id, ',' ORDER BY
// p.trace_id)" (PostgreSQL).
// `held_traces` adds the traces whose summary holds one of the attempt's parts (SQLite schema 18,
// PostgreSQL schema 15; task_index.h, SummaryMayHoldPart): a SELECT of their `trace_id`, `{0}` standing
// for `row`. `max_trace_ids` (TaskAttemptFilter's; 0: all) bounds the list to its first ids and one more.
std::string AttemptRowReadColumnsSql(std::string_view row, std::string_view trace_list,
                                     std::string_view held_traces, std::size_t max_trace_ids);

// The rows due for settling, or about to be: ended, with something to settle (task_index.h,
// HasAnythingToSettle) and not settled at their latest version. Both backends' task_attempts_unsettled
// index holds exactly these rows, and a query repeats the condition for the planner to use it.
inline constexpr std::string_view kUnsettledAttemptSql =
    "settles = 1 AND state <> 'running' AND (settled_version IS NULL OR settled_version <> indexed_at)";

}  // namespace sparktrace::tracing::store
