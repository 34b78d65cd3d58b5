#pragma once
// The task index without re-reading a trace: what a batch of spans changes in the parts of a trace
// that already has stored spans, from the parts as stored and the batch alone (plus the few stored
// spans above the batch's, read by id). The answer is what PartsOfTrace over all the trace's spans
// would give, or nothing when the batch may change which attempt some stored span belongs to, or a
// figure no part keeps lets it be known (then the caller recomputes the trace, task_index.h's
// Refresh). Without this, every batch of a long task re-read its whole trace: 20,000 spans written
// 512 at a time read 400,000 back (bench/store_bench.cc, --trace-spans).
//
// Pure: no I/O, no threads.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store::task_index {

// What the index keeps of a trace: its parts, and how many of its spans belong to no attempt only
// because a parent they name is not stored yet (a later span can still adopt them).
struct StoredTraceIndex {
  std::map<PartKey, Part> parts;
  // -1: unknown (a trace the index has not counted since schema 9; Refresh counts it).
  std::int64_t unresolved = -1;
  // Every part keeps the counts its error count is made of (Part::operations, failed_operations,
  // failed_jobs); parts written before schema 9 do not.
  bool exact = false;
};

// A span of the batch, and the stored version it replaces (same trace and span id), if any.
struct BatchSpan {
  IndexSpan now;
  std::optional<IndexSpan> before;
};

// A stored span by id (one not in the batch: an ancestor of a batch span), nullopt when not stored.
using StoredSpanById = std::function<Result<std::optional<IndexSpan>>(const std::string& span_id)>;

struct TraceIncrement {
  std::map<PartKey, Part> parts;      // every part of the trace after the batch
  std::set<PartKey> changed;          // the parts the batch changed or created
  std::int64_t unresolved = 0;
};

// The trace's parts after `batch` (its spans, each span id once), or nullopt when only a recompute
// can tell: an index not exact or with unresolved spans, a trace without Airflow identity, a span
// with findings, a replaced span whose place in the tree, identity, name or application changes, or
// a bound (start, end) that a replaced span narrows.
Result<std::optional<TraceIncrement>> IncrementTrace(const StoredTraceIndex& stored,
                                                     const std::vector<BatchSpan>& batch,
                                                     const StoredSpanById& stored_span);

// How many of `spans` (a whole trace) belong to no attempt because the walk up from them ends at a
// parent id that is not among them; 0 in a trace without Airflow identity (one part holds it all).
std::int64_t UnresolvedSpans(const std::vector<IndexSpan>& spans);

}  // namespace sparktrace::tracing::store::task_index
