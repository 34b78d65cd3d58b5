#pragma once
// Trace emission: builds spans from the applications' models (listener/correlate/span_builder.h)
// and submits them to the proxy's span sink (docs/tracing.md, "Driver events"):
//
//   * each Spark Connect operation's SQL executions, jobs, stages and phases, under the span the proxy recorded
//     for it (FindOperationSpan) and sampled as that span was; an operation the proxy does not know
//     yet is looked up again on the next few polls;
//   * each application's own trace, rooted at a spark.application span and sampled as a root
//     trace: the jobs of no Connect operation and, for applications without Connect operations,
//     the phase intervals; rebuilt at most every `application_trace_interval` while it runs.
//
// With their findings (feed_findings.h). Spans carry ids derived from the application and
// job/stage, so the store replaces earlier versions. Each span is submitted final exactly once,
// when it has ended (the only version an OTLP collector gets); every other version (still open,
// or updated after it ended) is submitted live, for the store only.
//
// Not synchronised: the feed thread owns it; FindOperationSpan and the sink are called on it.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "feed/feed_applications.h"
#include "feed/feed_findings.h"
#include "feed/feed_metrics.h"
#include "feed/operation_span_target.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "tracing/sampler.h"
#include "tracing/span.h"
#include "tracing/span_sink.h"

namespace sparktrace::feed {

class TraceEmitter {
 public:
  // `spans`, `applications`, `findings` and `totals` (the feed's counters) outlive it. `sql_limits`
  // bound the spark.sql.execution spans (their plan attribute).
  TraceEmitter(FindOperationSpan find_operation_span, tracing::SpanSink& spans, tracing::Sampler sampler,
               std::chrono::milliseconds application_trace_interval, FeedApplications& applications,
               FeedFindings& findings, EventLogFeedCounters& totals,
               listener::correlate::SqlSpanLimits sql_limits = {});
  TraceEmitter(const TraceEmitter&) = delete;
  TraceEmitter& operator=(const TraceEmitter&) = delete;

  // The operations of each application events changed since the last call (and of those whose
  // operations' lookups are being retried): each rebuilt and submitted when its state moved on.
  void EmitChangedOperations();
  // The traces of applications that changed: a running one's at most every interval, unless
  // `force` (the last poll).
  void EmitApplicationTraces(bool force);
  // The application's trace, rebuilt and submitted now.
  void EmitApplicationTrace(FeedApplication& application);
  // Drops what is kept of the operations of `source_key`: all of them (`still_held` null), or those
  // the model no longer holds.
  void ForgetProgressOf(const std::string& source_key,
                        const listener::correlate::ApplicationModel* still_held);
  // Operations looked up or emitted, held in memory.
  std::size_t operations_held() const { return progress_.size(); }

 private:
  // What an operation's spans are built from, in counts: once its jobs have all ended, spans
  // emitted in an equal state have nothing new to say. Driver events keep coming after the last
  // JobEnd (Closed when the client releases the operation, TaskEnds of killed speculative copies).
  struct OperationState {
    std::size_t jobs = 0;
    bool all_jobs_ended = false;
    int lifecycle_events = 0;  // the operation's Connect events, Started ... Closed
    std::size_t stage_attempts = 0;
    std::int64_t tasks_ended = 0;
    // Its SQL executions seen, and ended: SQLExecutionEnd follows the last JobEnd.
    std::size_t sql_executions = 0;
    std::size_t sql_executions_ended = 0;
    bool application_over = false;
    bool operator==(const OperationState&) const = default;
  };
  static OperationState StateOf(const listener::correlate::ApplicationModel& model,
                                const listener::correlate::ConnectOperationRecord* record,
                                const std::vector<std::int32_t>& jobs, std::string_view operation_id);
  struct OperationProgress {
    std::string log_id;
    std::string operation_id;
    bool emitted = false;
    OperationState emitted_state;   // as of the last emission
    bool findings_counted = false;  // its findings went into sparktrace_findings_total
    int lookups_failed = 0;
    std::set<tracing::SpanId> final_submitted;  // its spans submitted final, as of the last build
  };

  void EmitOperation(const std::string& log_id, FeedApplication& application,
                     const std::string& operation_id);
  // Submits each built span final the first time it is built ended, live otherwise; keeps in
  // `final_submitted` only ids still built (what the model forgot is never built again).
  void SubmitBuilt(listener::correlate::BuiltSpans built, std::set<tracing::SpanId>& final_submitted);

  const FindOperationSpan find_operation_span_;
  tracing::SpanSink& spans_;
  const tracing::Sampler sampler_;
  const std::chrono::milliseconds application_trace_interval_;
  const listener::correlate::SqlSpanLimits sql_limits_;
  FeedApplications& applications_;
  FeedFindings& findings_;
  EventLogFeedCounters& totals_;
  std::map<std::string, OperationProgress> progress_;  // by "<source key>/<operation id>"
};

}  // namespace sparktrace::feed
