#pragma once
// The `spark_connect.operation` span of an Operation (docs/tracing.md, "Operation spans"): its
// final version, once the operation has ended, and the live snapshot of a running one that the
// store shows until the final version replaces it (same trace and span id).
//
// Threads: pure functions of their arguments.

#include "tracing/connect/operation.h"
#include "tracing/connect/wall_clock.h"
#include "tracing/span.h"

namespace sparktrace::tracing::connect {

// `operation.ending` must be set.
Span BuildOperationSpan(const Operation& operation, const WallClock& clock);

// The operation still running at `now`: ends at `now` (so far), marked
// spark.connect.operation.state = running, with its progress so far; no outcome.
Span BuildRunningOperationSpan(const Operation& operation, const WallClock& clock, SteadyTime now);

}  // namespace sparktrace::tracing::connect
