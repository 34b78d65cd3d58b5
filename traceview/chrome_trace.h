#pragma once
// The Chrome trace-event download (docs/trace-view-api.md, "Downloads"), for Perfetto and
// chrome://tracing:
//
//   {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {"title": ..., ...}}
//
// One process (pid 1, named by the title). Each span is a complete event ("ph": "X", "ts"/"dur" in
// microseconds from the earliest span start, "name" its SpanLabel, "cat" its lane, "args" its ids,
// status and key attributes). Tracks ("tid") are given out lane by lane in lane order, and within a
// lane as many as its spans need so that no two events on a track overlap or nest (greedy interval
// partitioning, earliest start first, the lowest free track); each track has a thread_name
// ("jobs", "jobs #2", ...) and a thread_sort_index. The executor count, when known, is a counter
// track ("ph": "C", name "executors").
//
// Pure functions; thread-safe. Text that is not UTF-8 is replaced, never thrown on.

#include <span>
#include <string>
#include <string_view>

#include "traceview/executor_series.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// Compact JSON text. `executors` is the attempt's series (ComputeExecutorSeries).
std::string ChromeTraceJson(std::span<const tracing::Span> spans, const ExecutorSeries& executors,
                            std::string_view title);

}  // namespace sparktrace::traceview
