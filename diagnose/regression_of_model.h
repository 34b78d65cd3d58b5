#pragma once
// A log's application as one run of its job, for the history and the regression
// (diagnose/regression/): its window and its time in the driver's phases (the phase model,
// listener/correlate/phases.h), the figures the page reads from the spans the feed builds of the
// same events (traceview/regression_of_spans.h; tests/unit/diagnose/regression_of_model_test.cc
// checks that both give equal figures on real logs). No spans are built. The time outside Spark
// and the results' transfer are for the proxy to see: none here.
//
// Pure function of the model; thread-safe for concurrent readers of one model.

#include <optional>

#include "diagnose/regression/history.h"
#include "listener/correlate/application_model.h"

namespace sparktrace::diagnose {

// The run's start, wall and phases, and its state: "running" while its log is still being written
// (`in_progress`), else "failed" when a job failed, else "success". Who it is (run_id, href) is the
// caller's to say. nullopt without a window (no ApplicationStart).
std::optional<regression::RunSummary> RunOfApplication(const listener::correlate::ApplicationModel& model,
                                                       bool in_progress);

}  // namespace sparktrace::diagnose
