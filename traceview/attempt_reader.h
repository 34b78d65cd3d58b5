#pragma once
// Reads one attempt from a store the way its page shows it (docs/trace-view-api.md): its index row,
// the rows of the other attempts of its task (tries, neighbours, history), its spans from each of its
// traces, its six-phase breakdown and its history with the baseline. The attempt page
// (trace_view_api.h) and the settler (attempt_settler.h) both read through it, so that a settled
// cost and regression are what the page showed.
//
// Threads: one thread at a time (the phase cache is not synchronised); the store is the caller's.

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "diagnose/regression/history.h"
#include "traceview/breakdown.h"
#include "tracing/span.h"
#include "tracing/store/span_reader.h"

namespace sparktrace::traceview {

// How many runs the history panel (and so the regression's baseline) is over.
inline constexpr std::size_t kHistoryRuns = 30;

// The index rows an attempt's answer is made of (one query): every attempt of the task (newest first,
// at most 200, and the attempt itself always). What the answer's revision tag is computed from.
struct AttemptRows {
  std::vector<tracing::store::TaskAttemptRow> attempts;
  std::size_t current = 0;  // the attempt's row in `attempts`
  const tracing::store::TaskAttemptRow& row() const { return attempts[current]; }
};

struct ReadAttempt {
  // Every attempt of the task (newest first, at most 200, and the attempt itself always).
  std::vector<tracing::store::TaskAttemptRow> attempts;
  std::size_t current = 0;  // the attempt's row in `attempts`
  std::vector<tracing::Span> spans;
  Breakdown breakdown;
  diagnose::regression::History history;
  const tracing::store::TaskAttemptRow& row() const { return attempts[current]; }
};

// The spans of an index row's attempt, from each of its traces (one missing, deleted by retention
// meanwhile, is skipped): the spans of the attempt for an Airflow row, the whole trace otherwise.
Result<std::vector<tracing::Span>> ReadAttemptSpans(tracing::store::SpanReader& store,
                                                    const tracing::store::TaskAttemptRow& row);

class AttemptReader {
 public:
  // kNotFound when the store has no such attempt, or no span of it.
  Result<ReadAttempt> Read(tracing::store::SpanReader& store, const tracing::store::TaskAttemptKey& key);
  // The same in two steps: the index rows (kNotFound: no such attempt), then the spans and history.
  static Result<AttemptRows> ReadRows(tracing::store::SpanReader& store,
                                      const tracing::store::TaskAttemptKey& key);
  Result<ReadAttempt> Read(tracing::store::SpanReader& store, AttemptRows rows);

 private:
  // The six-phase breakdown of an attempt of the history, cached by what identifies its content.
  std::array<double, kViewPhaseCount> HistoryPhases(tracing::store::SpanReader& store,
                                                    const tracing::store::TaskAttemptRow& row);

  std::map<std::string, std::array<double, kViewPhaseCount>> phase_cache_;
};

}  // namespace sparktrace::traceview
