#pragma once
// The task index's upkeep, once for both backends (task_attempts.h says what the index is): which
// parts and rows change when traces are written or deleted. A backend calls these inside its write
// transaction with its TaskIndexDialect (task_index_dialect.h), which executes the SQL.
//
// Threads: the caller's.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/result.h"
#include "tracing/store/increment/part_increment.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store::task_index {

// Recomputes the parts of these traces (hex ids) from their stored spans, and the rows of every
// attempt they had or now have.
Result<void> Refresh(TaskIndexDialect& dialect, const std::vector<std::string>& trace_ids);
// The spans a batch writes to traces that had stored spans already, by trace (hex id), each with the
// stored version it replaces.
using BatchOfTraces = std::map<std::string, std::vector<BatchSpan>>;
// Brings the index up to date with such a batch (called after its spans are stored): a trace whose
// index the batch's spans and the few stored spans above them settle (part_increment.h) without
// re-reading it; the others recomputed, as Refresh does.
Result<void> Update(TaskIndexDialect& dialect, const BatchOfTraces& batch);
// Adds traces that the current transaction created (none of their spans was stored before), from their
// parts, which the caller computed from the spans themselves (PartsOfTrace): no read-back. The result is
// what Refresh would compute. A trace whose summary row, written by the same transaction, holds its
// attempt (SummaryHoldsAttempt) is left out: its attempt gets no row.
Result<void> AddNewTraceParts(TaskIndexDialect& dialect, const PartsByTrace& parts_by_trace);
// Drops the parts of these traces (about to be deleted) and adds up again the attempts they were of.
Result<void> Forget(TaskIndexDialect& dialect, const std::vector<std::string>& trace_ids);

// A part's figures as attempt_parts and task_attempts store them, in the column order both tables
// share after the key (start, end, spans, errors, open, the phases by SparkPhase, findings, top
// finding): what both backends write for a part, and for a row that is one part.
struct PartSums {
  std::int64_t start_unix_nano = 0;  // 0 for a part with no timed span
  std::int64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;
  std::int64_t open_count = 0;
  std::array<std::int64_t, kSparkPhaseCount> phase_ms{};
  std::int64_t finding_count = 0;
  std::optional<std::string_view> top_finding;  // nullopt: NULL (no finding)
};
PartSums SumsOf(const Part& part);

// The row of an attempt that has none yet, from the parts a batch created for it (`changes`, none
// replacing a stored part): an attempt has a row exactly when it has parts, so these are all of its
// parts, and the row is what a re-addition of its stored parts would write (its name the greatest, as
// SQL's max(); its top finding that of the part with the greatest impact) without reading them. Nothing when
// a change replaces a part (other parts may be stored: the caller adds them up).
struct NewAttemptRow {
  std::string_view name;  // into `changes`
  PartSums sums;
};
std::optional<NewAttemptRow> RowOfNewParts(const std::vector<PartChange>& changes);

// Whether settling the attempt a part makes whole (tracing/store/task_attempts.h, SettledFigures)
// could find anything: an Airflow attempt has its task's history and may have executors; an attempt
// without identity only when its trace names an application, whose driver feed brings the executors
// a cost is made of. A call per trace never has: its row says so (the `settles` column), and stays
// out of the settling queue.
bool HasAnythingToSettle(const PartKey& key, const Part& part);

// Attempts held by their trace's summary (SQLite schema 13, PostgreSQL schema 7): the attempt of a trace
// without Airflow identity whose summary row says all its task_attempts row would has no such row; the
// summary says so (traces.attempt), and the task list reads it from there. A call per trace, the
// store's commonest shape, then writes one row and its index entries less per span. Each attempt
// without identity is either a row or held, never both (each backend's task index keeps it so).
//
// Whether a part holds nothing a summary has no column for (an application, a span still open, a
// phase, a finding): else its attempt needs a row.
bool SummaryMayHoldAttempt(const PartKey& key, const Part& part);
// ... and whether `summary`, its trace's, says what the row would: the name, bounds, span and error
// counts (a failed call counts an error its attempt does not: that attempt keeps a row).
bool SummaryHoldsAttempt(const PartKey& key, const Part& part, const TraceSummaryRow& summary);
// For a trace a batch may create, from its spans: whether its summary will hold its attempt.
bool NewTraceSummaryHoldsAttempt(const std::vector<IndexSpan>& spans, const TraceSummaryRow& summary);

// Airflow parts held by their trace's summary (SQLite schema 18, PostgreSQL schema 15): a trace whose one
// part is an Airflow attempt's and says nothing its summary does not (its start, end and span count; no
// operation, failure, phase, finding, open span or application) keeps no attempt_parts row. Each
// backend's summary says so and keeps the part's map index; the rest of the key is the summary's Airflow
// identity (sqlite/index/sqlite_summary_attempts.h, postgres/held/postgres_held_parts.h).
//
// Whether a trace whose only part is this one may keep it in its summary (the summary must also agree).
bool SummaryMayHoldPart(const PartKey& key, const Part& part);
// A trace's parts: its one part when its summary may hold it, else null.
const std::pair<const PartKey, Part>* PartASummaryMayHold(const std::map<PartKey, Part>& parts);
// For a trace the batch creates, from its parts and its summary as the batch computed them: the map
// index of its one part when the summary it is about to write may hold that part (nullopt: it writes
// the part's row).
std::optional<std::int64_t> MapIndexOfHeldPart(const std::map<PartKey, Part>& parts,
                                               const TraceSummaryRow& summary);

// One condition of a list page on task_attempts, from a TaskAttemptFilter field in use, in the order
// the filter lists them: "<column> <operator>" and the value, for which each backend writes its own
// placeholder (values are bound, never spliced in). Not here: airflow_only (a literal) and trace_ids
// (a list, which each backend matches its own way).
struct AttemptCondition {
  std::string_view column_op;  // "dag_id =", "start_unix_nano >=", …
  std::variant<std::string, std::int64_t, std::uint64_t> value;
};
std::vector<AttemptCondition> AttemptConditions(const TaskAttemptFilter& filter);

}  // namespace sparktrace::tracing::store::task_index
