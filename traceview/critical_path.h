#pragma once
// The critical path of one attempt (docs/trace-view-api.md, "The critical path"), from the real
// dependencies rather than from overlaps:
//
//   operations   the top-level units (for an application's trace without operations: its jobs).
//                From the one that ended last, back to the one that ended last at or before the
//                current one's start (1 ms of slack for clock rounding): the client ran them in
//                order, so each waited for that one.
//   jobs         the same, among the spark.job children of each operation on the path.
//   stages       within each job on the path: from its last-ending stage back through
//                spark.stage.parent_ids to the parent that finished last (a parent's span is
//                looked up anywhere in the attempt, its latest attempt; it may belong to an earlier
//                job), until no parent ran (a skipped stage has no span).
//
// When any stage span lacks spark.stage.parent_ids (older traces, the REST feed), no stage is on
// the path and stage_dependencies_known is false (it is true for an attempt without stage spans). Parents and
// children come from parent_span_id within the input.
//
// Pure functions; thread-safe. O(n log n) in the number of spans.

#include <cstddef>
#include <span>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview {

struct PathSegment {
  std::size_t span_index = 0;  // into the input spans
  double start_ms = 0;         // epoch milliseconds: the span's own start and end
  double end_ms = 0;
};

struct CriticalPath {
  bool stage_dependencies_known = false;
  // Every span on the path (operations, jobs and stages), by start time, parents before children.
  std::vector<std::size_t> span_indices;
  // One per path span at the deepest level known below it (its stages where known, else the job,
  // else the operation), by start time; they may overlap.
  std::vector<PathSegment> segments;
  double ms = 0;  // the length of the union of the segments
};

// Spans of one attempt, in any order. Neither operations nor jobs: an empty path.
CriticalPath ComputeCriticalPath(std::span<const tracing::Span> spans);
// The same with the spans' parents already known (ParentIndices(spans), traceview/span_parents.h).
CriticalPath ComputeCriticalPath(std::span<const tracing::Span> spans,
                                 const std::vector<std::optional<std::size_t>>& parents);

}  // namespace sparktrace::traceview
