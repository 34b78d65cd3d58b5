#include "traceview/regression_of_spans.h"

namespace sparktrace::traceview {

diagnose::regression::RunSummary RunOfBreakdown(const Breakdown& breakdown) {
  diagnose::regression::RunSummary run;
  run.start_ms = breakdown.start_ms;
  run.wall_ms = breakdown.wall_ms();
  run.phases = breakdown.ms;
  return run;
}

diagnose::regression::RunSummary RunOfSpans(std::span<const tracing::Span> spans) {
  return RunOfBreakdown(ComputeBreakdown(spans));
}

}  // namespace sparktrace::traceview
