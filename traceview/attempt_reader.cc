#include "traceview/attempt_reader.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "traceview/attempt_spans.h"
#include "traceview/attempt_url.h"
#include "traceview/regression_of_spans.h"
#include "traceview/view_time.h"

namespace sparktrace::traceview {
namespace {

constexpr std::size_t kPhaseCacheEntries = 2048;
// The index page every attempt's task is read in: the history needs the latest kHistoryRuns, the
// links the neighbours; one query serves both.
constexpr std::size_t kTaskAttempts = 200;

using tracing::store::TaskAttemptRow;

}  // namespace

Result<std::vector<tracing::Span>> ReadAttemptSpans(tracing::store::SpanReader& store,
                                                    const TaskAttemptRow& row) {
  std::vector<tracing::TraceId> trace_ids;
  trace_ids.reserve(row.trace_ids.size());
  for (const std::string& trace_hex : row.trace_ids) {
    if (const auto trace_id = tracing::ParseTraceId(trace_hex)) trace_ids.push_back(*trace_id);
  }
  // One read for all the attempt's traces: an attempt of a call per trace has tens of thousands.
  auto read = store.GetTraces(trace_ids);
  if (!read.ok()) return read.error();
  if (!row.airflow) return std::move(read).value();
  // The spans come grouped by trace; an Airflow attempt's are its members in each (a trace may hold
  // other attempts too: Airflow 2.10 gives a whole DAG run one trace).
  std::vector<tracing::Span> all = std::move(read).value();
  std::vector<tracing::Span> spans;
  for (auto begin = all.begin(); begin != all.end();) {
    const auto end = std::find_if(begin, all.end(), [&begin](const tracing::Span& span) {
      return span.trace_id != begin->trace_id;
    });
    auto members = SpansOfAttempt(std::vector<tracing::Span>(std::make_move_iterator(begin),
                                                             std::make_move_iterator(end)),
                                  row.key);
    spans.insert(spans.end(), std::make_move_iterator(members.begin()), std::make_move_iterator(members.end()));
    begin = end;
  }
  return spans;
}

Result<ReadAttempt> AttemptReader::Read(tracing::store::SpanReader& store,
                                        const tracing::store::TaskAttemptKey& key) {
  auto rows = ReadRows(store, key);
  if (!rows.ok()) return rows.error();
  return Read(store, std::move(rows).value());
}

Result<AttemptRows> AttemptReader::ReadRows(tracing::store::SpanReader& store,
                                            const tracing::store::TaskAttemptKey& key) {
  // Every attempt of this task (newest first): this one, the tries of its run, its neighbours and
  // the history all come from this one page of the index.
  tracing::store::TaskAttemptFilter filter;
  filter.airflow_only = true;
  filter.dag_id = key.dag_id;
  filter.task_id = key.task_id;
  filter.map_index = key.map_index;
  filter.limit = kTaskAttempts;
  auto attempts = store.ListTaskAttempts(filter);
  if (!attempts.ok()) return attempts.error();
  AttemptRows read;
  read.attempts = std::move(attempts->rows);
  const auto current = std::find_if(read.attempts.begin(), read.attempts.end(),
                                    [&key](const TaskAttemptRow& row) { return row.key == key; });
  if (current != read.attempts.end()) {
    read.current = static_cast<std::size_t>(current - read.attempts.begin());
  } else {
    // Older than the newest attempts of the task: look it up by itself.
    filter.run_id = key.run_id;
    auto of_run = store.ListTaskAttempts(filter);
    if (!of_run.ok()) return of_run.error();
    for (const TaskAttemptRow& candidate : of_run->rows) {
      if (candidate.key == key) read.attempts.push_back(candidate);
    }
    if (read.attempts.empty() || !(read.attempts.back().key == key)) {
      return Error{ErrorCode::kNotFound, "no such task attempt"};
    }
    read.current = read.attempts.size() - 1;
  }
  return read;
}

Result<ReadAttempt> AttemptReader::Read(tracing::store::SpanReader& store, AttemptRows rows) {
  ReadAttempt read;
  read.attempts = std::move(rows.attempts);
  read.current = rows.current;
  auto spans = ReadAttemptSpans(store, read.row());
  if (!spans.ok()) return spans.error();
  if (spans->empty()) return Error{ErrorCode::kNotFound, "no such task attempt"};
  read.spans = std::move(spans).value();
  read.breakdown = ComputeBreakdown(read.spans);

  std::vector<diagnose::regression::RunSummary> runs;
  std::size_t listed = 0;
  for (std::size_t i = 0; i < read.attempts.size(); ++i) {
    const TaskAttemptRow& other = read.attempts[i];
    const bool is_current = i == read.current;
    if (!is_current && listed >= kHistoryRuns) continue;
    ++listed;
    // The current run's own figures are those of its spans as read now, not the index's; an
    // earlier run's spans are read for their phases only (cached), its wall is the index's.
    diagnose::regression::RunSummary summary =
        is_current ? RunOfBreakdown(read.breakdown) : diagnose::regression::RunSummary{};
    if (!is_current) {
      summary.wall_ms = AttemptWallMs(other);
      summary.phases = HistoryPhases(store, other);
    }
    summary.run_id = other.key.run_id;
    summary.try_number = other.key.try_number;
    summary.state = other.state;
    summary.start_ms = AttemptStartMs(other);  // the index orders the runs
    summary.href = AttemptPageHref(other.key);
    summary.current = is_current;
    runs.push_back(std::move(summary));
  }
  read.history = diagnose::regression::ComputeHistory(std::move(runs), kHistoryRuns);
  return read;
}

std::array<double, kViewPhaseCount> AttemptReader::HistoryPhases(tracing::store::SpanReader& store,
                                                                 const TaskAttemptRow& row) {
  // Ids are length-prefixed: any byte may be in them, "|" too, and two attempts never share a key.
  std::string cache_key =
      fmt::format("{}:{}|{}:{}|{}:{}|{}|{}|{}|{}|", row.key.dag_id.size(), row.key.dag_id,
                  row.key.task_id.size(), row.key.task_id, row.key.run_id.size(), row.key.run_id,
                  row.key.try_number, row.key.map_index, row.end_unix_nano, row.span_count);
  for (const std::string& trace_id : row.trace_ids) cache_key += trace_id;
  if (auto cached = phase_cache_.find(cache_key); cached != phase_cache_.end()) return cached->second;
  // A run that cannot be read now shows as empty rather than failing the page it is history on.
  auto spans = ReadAttemptSpans(store, row);
  const std::array<double, kViewPhaseCount> phases =
      spans.ok() ? RunOfSpans(*spans).phases : std::array<double, kViewPhaseCount>{};
  if (phase_cache_.size() >= kPhaseCacheEntries) phase_cache_.clear();  // simple bound; refilled on demand
  phase_cache_.emplace(std::move(cache_key), phases);
  return phases;
}

}  // namespace sparktrace::traceview
