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
// up (tracing/store/attempt_parts.h computes the parts; each backend stores and adds them).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The driver's phases as the list shows them (the attempt page computes a finer, exact breakdown).
enum class IndexedPhase : std::uint8_t { kResourceWait = 0, kCompute = 1, kIoWrite = 2, kIdle = 3 };
inline constexpr std::size_t kIndexedPhaseCount = 4;

struct TaskAttemptRow {
  bool airflow = true;                 // else a trace without Airflow identity
  TaskAttemptKey key;                  // empty strings, try 0, map index -1 for a trace without identity
  std::string name;                    // "dag.task", or the application's name / the root span's name
  std::vector<std::string> trace_ids;  // hex
  std::uint64_t start_unix_nano = 0;
  std::uint64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;  // failed operations (or, without operations, failed jobs)
  std::int64_t open_count = 0;   // spans still running (a job or application without its end event)
  std::array<std::int64_t, kIndexedPhaseCount> phase_ms{};
  std::int64_t finding_count = 0;
  std::string top_finding_json;  // {"id","severity","title","impact_seconds"} or "" when none
  std::string state;             // "running", "failed" or "success"
};

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
  std::size_t limit = 50;
  std::size_t offset = 0;
  bool oldest_first = false;
};

struct TaskAttemptPage {
  std::int64_t total = 0;  // rows matching the filter, all pages
  std::vector<TaskAttemptRow> rows;
};

}  // namespace sparktrace::tracing::store
