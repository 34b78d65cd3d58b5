#pragma once
// The task index's one computation, shared by every store backend: which spans of a trace belong to
// which task attempt, and what each attempt's part of the trace adds up to (times, counts, phases,
// findings). Backends read a trace's spans as IndexSpans (only the few columns this needs), call
// PartsOfTrace, and store the parts and their sums in their own tables.
//
// Pure: no I/O, no threads.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

// One (attempt, trace) part. `trace_key` is "" for an Airflow attempt (whose row adds up all its
// traces) and the trace id for a trace without identity (one row per trace).
struct PartKey {
  bool airflow = true;
  TaskAttemptKey attempt;
  std::string trace_key;
  // clang-tidy 14 misreads a defaulted <=> as a literal 0 comparison.
  // NOLINTNEXTLINE(modernize-use-nullptr)
  auto operator<=>(const PartKey&) const = default;
};

struct Part {
  std::string name;
  std::string app_id;
  std::uint64_t start = UINT64_MAX;
  std::uint64_t end = 0;
  std::int64_t spans = 0;
  // What decides "failed": an operation that failed (outcome failed; an interrupted or retried call is
  // not a failure of the task), or, in a trace without operations (a plain application), a failed job.
  std::int64_t operations = 0;
  std::int64_t failed_operations = 0;
  std::int64_t failed_jobs = 0;
  std::int64_t Errors() const { return operations > 0 ? failed_operations : failed_jobs; }
  std::int64_t open = 0;
  std::array<std::int64_t, kSparkPhaseCount> phase_ms{};  // by SparkPhase
  std::int64_t findings = 0;
  std::string top_finding;
  bool top_is_summary = false;
  std::set<std::string> finding_keys;
  double top_impact = -1;
};

struct IndexSpan {
  std::string span_id;
  std::string parent_id;
  std::string name;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  bool error = false;
  std::optional<TaskAttemptKey> identity;
  std::optional<std::int64_t> phase_duration_ms;
  bool open = false;
  std::string app_name;
  std::string app_id;
  std::string finding_events;  // the events JSON when it holds findings
};

// What the index needs of a span being written, read from the span itself (the same values the
// backends' SQL reads back from stored rows): for traces a batch creates, whose index entries are
// computed without reading anything back. `row` is the span's stored row
// (tracing/store/span_rows/stored_span.h).
IndexSpan IndexSpanOf(const Span& span, const StoredSpanRow& row);

// Adds one span to its part (PartsOfTrace does this for each span, in span order).
void AddSpan(const IndexSpan& span, Part& part);
// Turns `before`, a span already added to `part`, into `now`: a new version of the same span with
// the same name, parent and identity, and neither with findings. False when the part's bounds cannot
// be known without its other spans (`before` held the earliest start or latest end and `now` moves it
// inwards); the part is then unchanged.
bool ReplaceInPart(const IndexSpan& before, const IndexSpan& now, Part& part);

// The parts of one trace: each span goes to the attempt of its nearest ancestor-or-self with an
// identity; a trace where no span has one is a single part of its own.
std::map<PartKey, Part> PartsOfTrace(const std::string& trace_id, const std::vector<IndexSpan>& spans);
// That single part of a trace where no span has an identity (the caller knows none has), keyed
// (0, '', '', '', 0, -1, trace id) by PartsOfTrace.
Part PartWithoutIdentity(const std::vector<IndexSpan>& spans);

// The state an attempt's row shows, from the sums of its parts.
std::string_view AttemptState(std::int64_t open_count, std::int64_t error_count);

// The ORDER BY terms of a task list page (without "ORDER BY"), the same SQL in both backends: cost
// orders rows with settled figures (and not running) first, by money where there is some, then by
// core-seconds; ties and the rest newest first.
std::string TaskAttemptOrderSql(TaskAttemptOrder order);

// Where a page by start may find the attempts held by summaries (the list's second arm), given the
// page's last position among task_attempts rows alone: a held attempt that starts before (newest first)
// or after (oldest first) the start of the row at position offset + limit - 1 of the rows' order has at
// least offset + limit rows ahead of it, off the page. The held arm then reads only traces from that
// start on: in a store of Airflow attempts, whose summaries hold few or none, the arm no longer walks
// every trace's start (31 ms of a 36 ms page over 148,000 traces).
struct PageStartBound {
  std::string_view rows_order;  // of the edge row: "DESC" (newest first) or "ASC"
  std::string_view held_from;   // the held arm's start condition on the edge's start: ">=" or "<="
  std::int64_t edge_offset;     // OFFSET of the edge row among the rows
};
// nullopt for cost orders, an empty page or one past any row.
std::optional<PageStartBound> PageStartBoundOf(const TaskAttemptFilter& filter);

// "a,b,c" (the stored list of an attempt's traces) into its items.
std::vector<std::string> SplitCommas(const std::string& text);

}  // namespace sparktrace::tracing::store
