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

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store::task_index {

// The parents a trace's spans wait for: span ids that some spans name on their way up to an attempt
// but that are not stored (yet). Only such a span, when it comes, can move stored spans into an
// attempt; any other batch leaves every stored span where it is.
using AwaitedParents = std::set<std::string>;

// What the index keeps of a trace: its parts, and the parents its spans wait for.
struct StoredTraceIndex {
  std::map<PartKey, Part> parts;
  // nullopt: unknown (a trace not indexed since schema 9, or waiting for more than
  // kMaxAwaitedParents; Refresh finds them).
  std::optional<AwaitedParents> awaited;
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
  std::map<PartKey, Part> parts;  // every part of the trace after the batch
  std::set<PartKey> changed;      // the parts the batch changed or created
  AwaitedParents awaited;         // after the batch
};

// The trace's parts after `batch` (its spans, each span id once), or nullopt when only a recompute
// can tell: an index not exact or with unknown awaited parents, a batch span that is an awaited
// parent, a span with findings, a replaced span whose place in the tree, identity, name or application
// changes, or a bound (start, end) that a replaced span narrows; in a trace without Airflow identity
// (one part; its row only where it names an application), also a span with an identity and one that
// may rename the trace (a new root, a new application name).
Result<std::optional<TraceIncrement>> IncrementTrace(const StoredTraceIndex& stored,
                                                     const std::vector<BatchSpan>& batch,
                                                     const StoredSpanById& stored_span);

// The parents `spans` (a whole trace) wait for: the ids at which the walk up from a span without an
// attempt ends, not among them; none in a trace without Airflow identity (one part holds it all).
AwaitedParents AwaitedParentsOf(const std::vector<IndexSpan>& spans);

// How a store keeps a trace's awaited parents: comma-separated span ids ("" for none), or nullopt
// (stored as NULL: unknown) past kMaxAwaitedParents, when the trace is recomputed on each batch.
inline constexpr std::size_t kMaxAwaitedParents = 64;
std::optional<std::string> AwaitedParentsText(const AwaitedParents& awaited);
AwaitedParents ParseAwaitedParents(std::string_view text);

}  // namespace sparktrace::tracing::store::task_index
