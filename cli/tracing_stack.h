#pragma once
// Everything tracing needs at run time, built from TracingConfig: the SQLite and OTLP sinks (each
// behind its own SpanPipeline), the Spark Connect tracer the proxy calls, and the metrics.
//
// With event-log directories, --spark-ui or the push endpoint, it also runs the driver-event feed
// (feed/), whose POST route and metrics the admin server serves (admin_routes(),
// collectables()); they stay valid after Shutdown (pushes then get 503).
//
// Lifetime: create before the proxy server starts, keep until it has shut down; then Shutdown()
// ends the open operations and exports what is queued (bounded), before destruction.

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <memory>
#include <vector>

#include "admin/admin_server.h"
#include "cli/tracing_config.h"
#include "common/result.h"
#include "feed/event_log_feed.h"
#include "proxy/call_observer.h"
#include "tracing/airflow_report_ledger.h"
#include "tracing/connect/spark_connect_tracer.h"
#include "tracing/connect/tracing_metrics.h"
#include "tracing/id_generator.h"
#include "tracing/span_pipeline.h"
#include "tracing/span_sink.h"

namespace sparktrace::cli {

class TracingStack {
 public:
  // Opens the store (a bad path fails here, not at the first span) and creates the exporters.
  // `service_version` goes into the OTLP resource. Fails only for a config that cannot work.
  static Result<std::unique_ptr<TracingStack>> Create(const TracingConfig& config,
                                                      prometheus::Registry& registry,
                                                      std::string_view service_version);
  ~TracingStack();
  TracingStack(const TracingStack&) = delete;
  TracingStack& operator=(const TracingStack&) = delete;

  proxy::CallObserver& observer() { return *tracer_; }
  std::shared_ptr<const prometheus::Collectable> pipeline_metrics() const { return pipeline_metrics_; }
  // Metrics read at scrape time: the span pipelines', and the driver-event feed's when it runs.
  std::vector<std::shared_ptr<const prometheus::Collectable>> collectables() const;
  // POST /api/v1/airflow/task-attempts (Airflow's own task, tracing/airflow/airflow_task_route.h); and
  // POST /api/v1/events when the push endpoint is on (otherwise that path is a 404).
  std::vector<admin::PostRoute> admin_routes() const;

  // Ends open operations as unfinished and exports every queued span (each sink within its
  // shutdown timeout). Idempotent.
  void Shutdown();

 private:
  TracingStack() = default;

  tracing::RandomIdGenerator ids_;
  std::vector<std::unique_ptr<tracing::SpanPipeline>> pipelines_;
  tracing::SpanFanout fanout_;
  std::unique_ptr<tracing::connect::TracingMetrics> metrics_;
  std::unique_ptr<tracing::connect::SparkConnectTracer> tracer_;
  std::shared_ptr<tracing::connect::SpanPipelineMetrics> pipeline_metrics_;
  std::unique_ptr<feed::EventLogFeed> event_log_feed_;           // after the tracer it looks operations up in
  std::shared_ptr<feed::EventPushEndpoint> push_endpoint_;       // the feed's; outlives it
  bool push_needs_token_ = true;                                 // TracingConfig::event_push_needs_token
  std::shared_ptr<const prometheus::Collectable> feed_metrics_;  // the feed's; outlives it
  std::unique_ptr<tracing::AirflowReportLedger> report_ledger_;  // the route's
  admin::PostRoute airflow_task_route_;                          // submits to fanout_
  bool shut_down_ = false;
};

}  // namespace sparktrace::cli
