#include "tracing/connect/tracing_metrics.h"

#include <prometheus/metric_family.h>

#include <algorithm>
#include <string>

namespace sparktrace::tracing::connect {
namespace {

// From a Config call in milliseconds to a nightly job's hours.
prometheus::Histogram::BucketBoundaries OperationBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,  1,    2.5,  5,
          10,    30,   60,    120,  300, 600,  1800, 3600, 7200, 14400};
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& registry, const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::ClientMetric CounterSample(std::vector<prometheus::ClientMetric::Label> labels,
                                       std::uint64_t value) {
  prometheus::ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = static_cast<double>(value);
  return metric;
}

prometheus::MetricFamily CounterFamily(std::string name, std::string help) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Counter;
  return family;
}

}  // namespace

std::string_view UnknownMethodKindName(UnknownMethodKind kind) {
  switch (kind) {
    case UnknownMethodKind::kSparkConnect:
      return "spark_connect";
    case UnknownMethodKind::kOtherService:
      return "other";
    case UnknownMethodKind::kUnnamed:
      return "unnamed";
  }
  return "unnamed";
}

TracingMetrics::TracingMetrics(prometheus::Registry& registry)
    : invalid_traceparent_(Counter(registry, "sparktrace_invalid_traceparent_total",
                                   "traceparent headers ignored as invalid, by reason")),
      invalid_tracestate_(Counter(registry, "sparktrace_invalid_tracestate_total",
                                  "tracestate headers dropped as invalid, by reason")),
      invalid_airflow_(Counter(registry, "sparktrace_invalid_airflow_identity_total",
                               "x-airflow-* header sets ignored as invalid, by reason")),
      undecodable_(Counter(registry, "sparktrace_undecodable_messages_total",
                           "Spark Connect messages the decoder could not read (forwarded unchanged)")),
      operations_first_seen_on_reattach_(
          Counter(registry, "sparktrace_operations_first_seen_on_reattach_total",
                  "Spark Connect operations traced from a ReattachExecute: their ExecutePlan was never seen "
                  "by this proxy process")
              .Add({})),
      operations_(
          Counter(registry, "sparktrace_operations_total", "Spark Connect operations ended, by outcome")),
      operations_active_(prometheus::BuildGauge()
                             .Name("sparktrace_operations_active")
                             .Help("Spark Connect operations started and not ended yet")
                             .Register(registry)
                             .Add({})),
      operation_duration_(prometheus::BuildHistogram()
                              .Name("sparktrace_operation_duration_seconds")
                              .Help("Spark Connect operations: ExecutePlan arrival to the operation's end")
                              .Register(registry)
                              .Add({}, OperationBuckets())),
      time_to_first_batch_(prometheus::BuildHistogram()
                               .Name("sparktrace_operation_time_to_first_batch_seconds")
                               .Help("Spark Connect operations: ExecutePlan arrival to the first Arrow batch")
                               .Register(registry)
                               .Add({}, OperationBuckets())),
      progress_updates_(
          Counter(registry, "sparktrace_operation_progress_updates_total",
                  "execution_progress responses (Spark 4.0+) read from operations' result streams")
              .Add({})),
      progress_snapshots_(Counter(registry, "sparktrace_operation_progress_snapshots_total",
                                  "Live snapshots of running operations' spans sent to the store")
                              .Add({})),
      progress_thinned_(Counter(registry, "sparktrace_operation_progress_events_thinned_total",
                                "execution_progress updates not kept as span events (interval and count "
                                "bounds), counted when their operation ends")
                            .Add({})) {
  // Every series of the bounded label sets exists from the start, at 0.
  auto& traced_calls =
      Counter(registry, "sparktrace_traced_calls_total",
              "Calls traced, by where their trace came from (client traceparent, Airflow identity, new)");
  for (std::size_t i = 0; i < kTraceOriginCount; ++i) {
    traced_calls_by_origin_[i] =
        &traced_calls.Add({{"origin", std::string(TraceOriginName(static_cast<TraceOrigin>(i)))}});
  }
  auto& unknown_methods =
      Counter(registry, "sparktrace_unknown_methods_total",
              "Calls forwarded without decoding: methods the decoder does not know, by kind of service");
  for (std::size_t i = 0; i < kUnknownMethodKindCount; ++i) {
    const auto kind = static_cast<UnknownMethodKind>(i);
    unknown_methods_[i] = &unknown_methods.Add({{"service", std::string(UnknownMethodKindName(kind))}});
  }
  auto& header_ignored =
      Counter(registry, "sparktrace_operation_id_header_ignored_total",
              "spark-connect-operation-id request headers an operation was not keyed by, by reason");
  for (std::size_t i = 0; i < kOperationIdHeaderIssueCount; ++i) {
    const auto issue = static_cast<OperationIdHeaderIssue>(i);
    header_ignored_[i] = &header_ignored.Add({{"reason", std::string(OperationIdHeaderIssueName(issue))}});
  }
  for (std::size_t i = 0; i < kOperationOutcomeCount; ++i) {
    const auto outcome = static_cast<OperationOutcome>(i);
    operations_by_outcome_[i] = &operations_.Add({{"outcome", std::string(OperationOutcomeName(outcome))}});
  }
}

void TracingMetrics::UndecodableMessage(std::string_view method, std::string_view direction) {
  undecodable_.Add({{"method", std::string(method)}, {"direction", std::string(direction)}}).Increment();
}

void TracingMetrics::OperationEnded(OperationOutcome outcome, std::chrono::steady_clock::duration duration,
                                    std::optional<std::chrono::steady_clock::duration> time_to_first_batch) {
  operations_by_outcome_[static_cast<std::size_t>(outcome)]->Increment();
  operations_active_.Decrement();
  operation_duration_.Observe(Seconds(duration));
  if (time_to_first_batch) time_to_first_batch_.Observe(Seconds(*time_to_first_batch));
}

std::vector<prometheus::MetricFamily> SpanPipelineMetrics::Collect() const {
  auto exported = CounterFamily("sparktrace_spans_exported_total", "Spans delivered to a sink, by sink");
  auto dropped = CounterFamily(
      "sparktrace_spans_dropped_total",
      "Spans lost before a sink had them: queue full, shutting down, export failed, or spool full");
  auto spooled = CounterFamily("sparktrace_spans_spooled_total",
                               "Spans put in the on-disk spool because the sink was slow or down, by sink");
  prometheus::MetricFamily spool_bytes;
  spool_bytes.name = "sparktrace_span_spool_bytes";
  spool_bytes.help = "Bytes of spans waiting in the on-disk spool for the sink, by sink";
  spool_bytes.type = prometheus::MetricType::Gauge;
  auto batches = CounterFamily("sparktrace_span_export_batches_total", "Export calls to a sink, by result");
  auto refused_files =
      CounterFamily("sparktrace_span_spool_files_refused_total",
                    "Files named like spool segments that the spool left alone (links, other kinds of file, "
                    "other users' files), by sink");
  for (const SpanPipeline* pipeline : pipelines_) {
    const SpanPipelineCounters counters = pipeline->counters();
    const std::string& sink = pipeline->name();
    const SpanExporterCounters exporter = pipeline->exporter_counters();
    // A batch put in the spool is out of the queue but not yet in the store: delivered once drained.
    // (Batches a previous run left in the spool count as delivered only from then on: they are not in
    // this run's spooled total.)
    const std::uint64_t waiting =
        exporter.spans_spooled - std::min(exporter.spans_spooled, exporter.spans_drained);
    const std::uint64_t not_delivered = waiting + exporter.spans_refused;
    exported.metric.push_back(
        CounterSample({{"sink", sink}}, counters.exported - std::min(counters.exported, not_delivered)));
    dropped.metric.push_back(
        CounterSample({{"reason", "queue_full"}, {"sink", sink}}, counters.dropped_queue_full));
    dropped.metric.push_back(
        CounterSample({{"reason", "shutdown"}, {"sink", sink}}, counters.dropped_after_shutdown));
    // A batch the spool had no room for fails its Export: counted once, as spool_full.
    const std::uint64_t failed =
        counters.export_failed - std::min(counters.export_failed, exporter.spans_dropped_spool_full);
    dropped.metric.push_back(CounterSample({{"reason", "export_failed"}, {"sink", sink}}, failed));
    dropped.metric.push_back(
        CounterSample({{"reason", "spool_full"}, {"sink", sink}}, exporter.spans_dropped_spool_full));
    dropped.metric.push_back(
        CounterSample({{"reason", "store_refused"}, {"sink", sink}}, exporter.spans_refused));
    spooled.metric.push_back(CounterSample({{"sink", sink}}, exporter.spans_spooled));
    prometheus::ClientMetric bytes;
    bytes.label = {{"sink", sink}};
    bytes.gauge.value = static_cast<double>(exporter.spool_bytes);
    spool_bytes.metric.push_back(std::move(bytes));
    batches.metric.push_back(
        CounterSample({{"result", "ok"}, {"sink", sink}}, counters.batches - counters.failed_batches));
    batches.metric.push_back(CounterSample({{"result", "error"}, {"sink", sink}}, counters.failed_batches));
    refused_files.metric.push_back(CounterSample({{"sink", sink}}, exporter.spool_files_refused));
  }
  return {std::move(exported),    std::move(dropped), std::move(spooled),
          std::move(spool_bytes), std::move(batches), std::move(refused_files)};
}

}  // namespace sparktrace::tracing::connect
