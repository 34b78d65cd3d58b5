#pragma once
// The task index's public shapes: one row per Airflow task attempt (and one per trace that has no
// Airflow identity, e.g. a plain Spark application), as every store backend lists them.
//
// An attempt is identified by (dag, task, run, try, map index), the airflow.* attributes of the
// proxy's spans; its members are the spans carrying that identity and every span below them (the
// driver's lifecycle, job, stage and phase spans carry no identity of their own). One attempt
// usually is one trace; with Airflow 2.10's per-DAG-run trace ids several attempts share a trace,
// and an attempt can span traces (a client that changes traceparent between calls, a retry through
// another proxy): the index keeps one part per (attempt, trace) and the attempt's row adds its parts
// up (tracing/store/task_index/attempt_parts.h computes the parts; each backend stores and adds them).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::store {

struct TaskAttemptKey {
  std::string dag_id;
  std::string task_id;
  std::string run_id;
  std::int64_t try_number = 1;
  std::int64_t map_index = -1;
  // clang-tidy 14 misreads a defaulted <=> as a literal 0 comparison.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const TaskAttemptKey&) const = default;
};

// What an attempt finally came to, computed once it is settled (no longer running and quiet: no span
// of it indexed for a while) by the trace view's code (traceview/attempt_settler.h) and written into
// its row. The store only keeps these figures; it never computes them (cost needs traceview/).
struct SettledFigures {
  std::optional<double> core_seconds;   // nullopt: the executors' cores were not known
  std::optional<double> gib_seconds;    // nullopt: the application's memory settings were not known
  std::optional<double> money;          // nullopt: no prices configured, or a priced figure unknown
  std::optional<double> idle_fraction;  // nullopt: no executor core allocated
  bool regression = false;              // the regression finding held (traceview/regression.h)
  std::uint64_t settled_unix_nano = 0;  // when the figures were written (the settler's clock)
};

struct TaskAttemptRow {
  bool airflow = true;                 // else a trace without Airflow identity
  TaskAttemptKey key;                  // empty strings, try 0, map index -1 for a trace without identity
  std::string name;                    // "dag.task", or the application's name / the root span's name
  std::vector<std::string> trace_ids;  // hex, ascending; at most TaskAttemptFilter::max_trace_ids
  bool trace_ids_truncated = false;    // the attempt has more traces than trace_ids names
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;  // failed operations (or, without operations, failed jobs)
  std::int64_t open_count = 0;   // spans still running (a job or application without its end event)
  // The driver's phases as the list shows them, by SparkPhase (the attempt page computes a finer,
  // exact breakdown).
  std::array<std::int64_t, kSparkPhaseCount> phase_ms{};
  std::int64_t finding_count = 0;
  std::string top_finding_json;  // {"id","severity","title","impact_seconds"} or "" when none
  std::string state;             // "running", "failed" or "success"
  // When a change of the row's figures was last indexed (the writer's clock, unix nanos); it also
  // serves as the row's version: it grows on every change, so settled figures say which one they are of.
  std::uint64_t indexed_unix_nano = 0;
  std::optional<SettledFigures> settled;  // the last settled figures, if any
  bool settled_current = false;           // they are of the row as it is now (nothing indexed since)
};

// Which attempts a list page shows first. Cost orders by money where there is some, then by
// core-seconds; rows with no settled figures (never settled, or running again) come last either way.
enum class TaskAttemptOrder : std::uint8_t { kNewestFirst, kOldestFirst, kCostDescending, kCostAscending };

struct TaskAttemptFilter {
  std::optional<std::string> dag_id;
  std::optional<std::string> task_id;
  std::optional<std::string> run_id;
  std::optional<std::int64_t> try_number;
  std::optional<std::int64_t> map_index;
  std::optional<std::string> state;
  std::uint64_t since_unix_nano = 0;  // on the attempt's start; 0: no bound
  std::uint64_t until_unix_nano = 0;  // 0: no bound
  // When set, only attempts with a part in one of these traces (a search result; may be empty).
  std::optional<std::vector<std::string>> trace_ids;
  bool airflow_only = false;
  // The trace ids a row names, at most (the first in id order; trace_ids_truncated says when there were
  // more): a list shows a few, an attempt of 48,000 traces made a list page of 1.7 MB. 0: every one (the
  // attempt page reads its spans through them).
  std::size_t max_trace_ids = 0;
  std::size_t limit = 50;
  std::size_t offset = 0;
  TaskAttemptOrder order = TaskAttemptOrder::kNewestFirst;
};

struct TaskAttemptPage {
  std::int64_t total = 0;  // rows matching the filter, all pages
  std::vector<TaskAttemptRow> rows;
};

// One row of the index, by its primary key: `trace_key` is "" for an Airflow attempt and the trace id
// for a trace without identity (as attempt_parts.h's PartKey).
struct AttemptRef {
  bool airflow = true;
  TaskAttemptKey key;
  std::string trace_key;
  // clang-tidy 14 misreads a defaulted <=> as a literal 0 comparison.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const AttemptRef&) const = default;
};

// An attempt due for settling, with the row version (indexed_unix_nano) its figures must be of.
struct DueAttempt {
  AttemptRef ref;
  std::uint64_t indexed_unix_nano = 0;
};

struct DueAttempts {
  std::vector<DueAttempt> due;  // the longest quiet first, at most the limit asked for
  std::int64_t backlog = 0;     // every row not running whose figures are missing or out of date
};

// The outcome of recording settled figures. `claimed` is false when another settler recorded this
// version first, or the row changed (or went) since it was listed: then the caller counts nothing.
struct SettleClaim {
  bool claimed = false;
  std::optional<SettledFigures> previous;  // the figures this claim replaced (an attempt re-settled)
};

}  // namespace sparktrace::tracing::store
