#pragma once
// Prometheus metrics of tracing (docs/tracing.md, "Metrics"). Labels are bounded: reasons and
// outcomes are small enums, methods are the known Spark Connect methods or "other"; a method the
// decoder does not know is counted by the kind of service only, never by its name.

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <chrono>
#include <memory>
#include <string_view>
#include <vector>

#include "tracing/connect/call_operation_id.h"
#include "tracing/connect/operation.h"
#include "tracing/span_pipeline.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {

// What a call to a method the decoder does not know was a call to.
enum class UnknownMethodKind : std::uint8_t {
  kSparkConnect,  // a SparkConnectService method newer than this build (ListSqlExecutions, …)
  kOtherService,  // another gRPC service behind the same port
  kUnnamed,       // a :path too long or too odd to name a span after (the span is "_OTHER")
};
inline constexpr std::size_t kUnknownMethodKindCount = 3;

// "spark_connect", "other", "unnamed".
std::string_view UnknownMethodKindName(UnknownMethodKind kind);

// Thread-safe; registered in a registry that must outlive it.
class TracingMetrics {
 public:
  explicit TracingMetrics(prometheus::Registry& registry);

  // Per call: the origin's counter is looked up once, at construction, not per call (a family's
  // Add builds and hashes a label map under its lock).
  void TracedCall(TraceOrigin origin) {
    traced_calls_by_origin_[static_cast<std::size_t>(origin)]->Increment();
  }
  void InvalidTraceparent(std::string_view reason) {
    Labelled(invalid_traceparent_, "reason", reason).Increment();
  }
  void InvalidTracestate(std::string_view reason) {
    Labelled(invalid_tracestate_, "reason", reason).Increment();
  }
  void InvalidAirflowIdentity(std::string_view reason) {
    Labelled(invalid_airflow_, "reason", reason).Increment();
  }
  // `method` is a Spark Connect method name or "other"; direction "in" (requests) or "out".
  void UndecodableMessage(std::string_view method, std::string_view direction);

  // A call forwarded without decoding, because its method is not one the decoder knows.
  void UnknownMethod(UnknownMethodKind kind) {
    unknown_methods_[static_cast<std::size_t>(kind)]->Increment();
  }
  // A spark-connect-operation-id header the call was not keyed by.
  void OperationIdHeaderIgnored(OperationIdHeaderIssue issue) {
    header_ignored_[static_cast<std::size_t>(issue)]->Increment();
  }

  void OperationStarted() { operations_active_.Increment(); }
  // An operation whose first call here was a ReattachExecute (OperationStarted is counted too).
  void OperationFirstSeenOnReattach() { operations_first_seen_on_reattach_.Increment(); }
  void OperationEnded(OperationOutcome outcome, std::chrono::steady_clock::duration duration,
                      std::optional<std::chrono::steady_clock::duration> time_to_first_batch);

  // Spark 4's execution_progress (docs/tracing.md, "Live progress"): a response read, a live
  // snapshot of a running operation's span sent to the store, and, when an operation ends, its
  // updates that did not become `spark.connect.progress` events (--progress-event-interval,
  // --progress-max-events).
  void ProgressUpdate() { progress_updates_.Increment(); }
  void ProgressSnapshot() { progress_snapshots_.Increment(); }
  void ProgressEventsThinned(std::uint64_t count) { progress_thinned_.Increment(static_cast<double>(count)); }

 private:
  static prometheus::Counter& Labelled(prometheus::Family<prometheus::Counter>& family,
                                       std::string_view label, std::string_view value) {
    return family.Add({{std::string(label), std::string(value)}});
  }

  std::array<prometheus::Counter*, kTraceOriginCount> traced_calls_by_origin_{};
  prometheus::Family<prometheus::Counter>& invalid_traceparent_;
  prometheus::Family<prometheus::Counter>& invalid_tracestate_;
  prometheus::Family<prometheus::Counter>& invalid_airflow_;
  prometheus::Family<prometheus::Counter>& undecodable_;
  std::array<prometheus::Counter*, kUnknownMethodKindCount> unknown_methods_{};
  std::array<prometheus::Counter*, kOperationIdHeaderIssueCount> header_ignored_{};
  prometheus::Counter& operations_first_seen_on_reattach_;
  prometheus::Family<prometheus::Counter>& operations_;
  std::array<prometheus::Counter*, kOperationOutcomeCount> operations_by_outcome_{};
  prometheus::Gauge& operations_active_;
  prometheus::Histogram& operation_duration_;
  prometheus::Histogram& time_to_first_batch_;
  prometheus::Counter& progress_updates_;
  prometheus::Counter& progress_snapshots_;
  prometheus::Counter& progress_thinned_;
};

// The span pipelines' counters, read at scrape time: sparktrace_spans_exported_total{sink},
// sparktrace_spans_dropped_total{sink,reason}, sparktrace_span_export_batches_total{sink,result}.
class SpanPipelineMetrics final : public prometheus::Collectable {
 public:
  // The pipelines must outlive every scrape (the admin server is stopped first).
  explicit SpanPipelineMetrics(std::vector<const SpanPipeline*> pipelines)
      : pipelines_(std::move(pipelines)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::vector<const SpanPipeline*> pipelines_;
};

}  // namespace sparktrace::tracing::connect
