#pragma once
// The diagnosis engine: rules over a correlated ApplicationModel (listener/correlate) that say what
// made a Spark application, or one Spark Connect operation, slow or fail, as Findings (finding.h)
// ranked by impact, most impactful first, with findings that share a cause on one stage linked
// (data-skew → oom-and-spill → gc-pressure: "causes"/"caused-by"; task-failures with out-of-memory
// reasons ↔ oom-and-spill: "same-cause"; the slow-spark-jobs summary "summarises" the others).
//
// Rules (one per file, rules/<id>.cc; thresholds in rule_thresholds.h and docs/diagnose-rules.md):
//   resource-wait-long, s3-write-slow, data-skew, oom-and-spill, shuffle-bottleneck, low-parallelism,
//   gc-pressure, idle-executors (application only), task-failures, slow-spark-jobs (the summary).
//
// Pure functions: they read the model and allocate only their answer. Thread-safe for concurrent
// readers of one model (the model itself is not synchronised: do not feed it meanwhile). Cost: in
// proportion to the stage attempts in scope (each rule walks them once; quantiles sort a stage's
// sample, at most kExactDurationLimit values; low-parallelism also walks the application's stage
// attempts for each stage it is about to report), so DiagnoseOperation can be called again and again
// as a live log grows.

#include <vector>

#include "diagnose/finding.h"
#include "diagnose/rule_thresholds.h"
#include "listener/correlate/application_model.h"

namespace sparktrace::diagnose {

// Application- and stage-scoped findings over every job and stage attempt of the application.
std::vector<Finding> DiagnoseApplication(const listener::correlate::ApplicationModel& model,
                                         const RuleThresholds& thresholds);

// Findings over one Connect operation's jobs and their stage attempts only, in its window; scopes
// carry the operation id. idle-executors is not judged (executors are shared by operations).
std::vector<Finding> DiagnoseOperation(const listener::correlate::ApplicationModel& model,
                                       const listener::correlate::ConnectOperationRecord& operation,
                                       const RuleThresholds& thresholds);

// Internal steps, exposed for tests: most impactful first (then the summary, then severity, then
// key); and the
// linking of findings that share a cause.
void RankFindings(std::vector<Finding>& findings);
void LinkRelatedFindings(std::vector<Finding>& findings);

}  // namespace sparktrace::diagnose
