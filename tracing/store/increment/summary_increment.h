#pragma once
// A trace's summary row (stored_span.h, SummarizeTrace) after a batch, from the row as stored and the
// batch's spans alone, for a trace that has stored spans already: without it every batch of a long
// trace recomputed the summary from all the trace's spans. Nothing when only a recompute can tell
// (a new root, a span earlier than the trace's start, a replaced span that moves, renames, changes its
// identity or pulls the trace's end in).
//
// Pure: no I/O, no threads.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

// What the summary counts of one version of a span.
struct SummarySpan {
  bool root = false;  // no parent
  std::string name;
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  bool error = false;
  std::optional<std::string> dag_id, task_id, run_id;
  std::optional<std::int64_t> try_number;
  bool operator==(const SummarySpan&) const = default;
};

// A span of the batch, and the stored version it replaces.
struct SummaryBatchSpan {
  SummarySpan now;
  std::optional<SummarySpan> before;
};

// What the batch adds to the stored row: the new end, counts to add, and identity values to fold in
// with the row's by maximum (nullopt: none in the batch).
struct SummaryChange {
  std::int64_t end_unix_nano = 0;
  std::int64_t spans_added = 0;
  std::int64_t errors_added = 0;  // may be negative: a replaced span that no longer failed
  std::optional<std::string> dag_id, task_id, run_id;
  std::optional<std::int64_t> try_number;
};

// What the summary counts of a span about to be written (both stores).
SummarySpan SummarySpanOf(const StoredSpanRow& row);

std::optional<SummaryChange> SummaryIncrement(std::int64_t stored_start_unix_nano,
                                              std::int64_t stored_end_unix_nano,
                                              const std::vector<SummaryBatchSpan>& batch);

}  // namespace sparktrace::tracing::store
