#pragma once
// The live progress of a Spark Connect operation span (Spark 4's execution_progress, as the proxy
// writes it: docs/tracing.md, "Live progress"), read back for the attempt JSON's `progress` field
// (docs/trace-view-api.md) and whether the span is a snapshot of a still running operation.
//
// Threads: pure functions of their arguments.

#include <cstdint>
#include <optional>

#include "tracing/span.h"

namespace sparktrace::traceview {

struct SpanProgress {
  std::int64_t stages_done = 0;
  std::int64_t stages_total = 0;
  std::int64_t tasks_done = 0;
  std::int64_t tasks_total = 0;
  std::int64_t input_bytes_read = 0;
  std::int64_t inflight_tasks = 0;
  std::int64_t updates = 0;
};

// nullopt for spans without progress (every span but an operation's from a Spark 4 server).
std::optional<SpanProgress> ProgressOf(const tracing::Span& span);

// A live snapshot of an operation span the proxy sends while the operation runs
// (spark.connect.operation.state = running); its final version replaces it in the store.
bool IsRunningOperationSnapshot(const tracing::Span& span);

}  // namespace sparktrace::traceview
