#pragma once
// Prometheus metrics of tracing (docs/tracing.md, "Metrics"). Labels are bounded: reasons and
// outcomes are small enums, methods are the known Spark Connect methods or "other".

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

#include "tracing/connect/operation.h"
#include "tracing/span_pipeline.h"

namespace sparktrace::tracing::connect {

// Thread-safe; registered in a registry that must outlive it.
class TracingMetrics {
 public:
  explicit TracingMetrics(prometheus::Registry& registry);

  void TracedCall(std::string_view origin) { Labelled(traced_calls_, "origin", origin).Increment(); }
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

  void OperationStarted() { operations_active_.Increment(); }
  void OperationEnded(OperationOutcome outcome, std::chrono::steady_clock::duration duration,
                      std::optional<std::chrono::steady_clock::duration> time_to_first_batch);

 private:
  static prometheus::Counter& Labelled(prometheus::Family<prometheus::Counter>& family,
                                       std::string_view label, std::string_view value) {
    return family.Add({{std::string(label), std::string(value)}});
  }

  prometheus::Family<prometheus::Counter>& traced_calls_;
  prometheus::Family<prometheus::Counter>& invalid_traceparent_;
  prometheus::Family<prometheus::Counter>& invalid_tracestate_;
  prometheus::Family<prometheus::Counter>& invalid_airflow_;
  prometheus::Family<prometheus::Counter>& undecodable_;
  prometheus::Family<prometheus::Counter>& operations_;
  std::array<prometheus::Counter*, kOperationOutcomeCount> operations_by_outcome_{};
  prometheus::Gauge& operations_active_;
  prometheus::Histogram& operation_duration_;
  prometheus::Histogram& time_to_first_batch_;
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
