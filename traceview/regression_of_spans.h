#pragma once
// A task attempt as one run of its task, for the history panel and the regression
// (diagnose/regression/): its start, wall and phases are those of its spans' breakdown
// (breakdown.h). `sparktrace diagnose` reads the same figures from the listener's model for a log's
// application (diagnose/regression_of_model.h); tests/unit/diagnose/regression_of_model_test.cc
// checks that both agree on real logs. Who the run is (run id, try, link) and its state are the
// task index's to say (attempt_reader.h).
//
// Pure functions; thread-safe.

#include <span>

#include "diagnose/regression/history.h"
#include "traceview/breakdown.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// The run of an already computed breakdown.
diagnose::regression::RunSummary RunOfBreakdown(const Breakdown& breakdown);
// The run of an attempt made of `spans` (in any order); no spans: all zero.
diagnose::regression::RunSummary RunOfSpans(std::span<const tracing::Span> spans);

}  // namespace sparktrace::traceview
