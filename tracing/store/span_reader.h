#pragma once
// SpanReader: the store's reading role, as the trace view and `sparktrace traces` use it: traces,
// their spans, and the task index's attempts (task_attempts.h).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/task_attempts.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store {

struct TraceFilter {
  // Each set field must match exactly (the Airflow identity as stored in the trace summary).
  std::optional<std::string> dag_id{};
  std::optional<std::string> task_id{};
  std::optional<std::string> run_id{};
  // Only traces that started at or after this time; 0 for no bound.
  std::uint64_t since_unix_nano = 0;
  // At most this many traces, newest first; 0 for no limit.
  std::size_t limit = 100;
};

class SpanReader {
 public:
  virtual ~SpanReader() = default;

  // Summaries matching `filter`, newest (latest start) first.
  virtual Result<std::vector<TraceSummary>> ListTraces(const TraceFilter& filter) = 0;
  // All spans of a trace ordered by start time (then span id); kNotFound when it has none.
  virtual Result<std::vector<Span>> GetTrace(const TraceId& trace_id) = 0;
  // All spans of these traces in one read (an attempt of a call per trace has thousands of them):
  // grouped by trace, each trace's spans ordered as GetTrace orders them; a trace with no spans
  // (unknown, or deleted by retention meanwhile) is simply absent, and none at all is no error. The
  // backends answer with one query; this fallback (for stores that have no such query, e.g. test
  // fakes) asks GetTrace once per trace.
  virtual Result<std::vector<Span>> GetTraces(std::span<const TraceId> trace_ids) {
    std::vector<Span> spans;
    for (const TraceId& trace_id : trace_ids) {
      auto trace = GetTrace(trace_id);
      if (!trace.ok()) {
        if (trace.error().code == ErrorCode::kNotFound) continue;
        return trace.error();
      }
      for (Span& span : *trace) spans.push_back(std::move(span));
    }
    return spans;
  }
  // The trace holding a span with this spark.connect.operation_id (the newest one if several do);
  // kNotFound when none does.
  virtual Result<TraceId> FindTraceByOperation(std::string_view operation_id) = 0;

  // Airflow task attempts (and traces without Airflow identity), one page, with the filter's order.
  virtual Result<TaskAttemptPage> ListTaskAttempts(const TaskAttemptFilter& filter) = 0;
  // Trace ids (hex) that a search text names: a trace id, an operation id or a Spark application id.
  virtual Result<std::vector<std::string>> TracesMatching(std::string_view text) = 0;
};

}  // namespace sparktrace::tracing::store
