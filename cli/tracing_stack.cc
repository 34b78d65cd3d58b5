#include "cli/tracing_stack.h"

#include <spdlog/spdlog.h>

#include "tracing/airflow/airflow_task_route.h"
#include "tracing/otlp/grpc_exporter.h"
#include "tracing/otlp/http_exporter.h"
#include "tracing/otlp/resource_attributes.h"
#include "tracing/sampler.h"
#include "tracing/store/export/store_span_exporter.h"
#include "tracing/store/open/open_span_store.h"

namespace sparktrace::cli {
namespace {

Result<std::unique_ptr<tracing::SpanExporter>> OtlpExporter(const OtlpConfig& otlp,
                                                            std::string_view service_version) {
  tracing::otlp::ResourceAttributes resource = tracing::otlp::BuildResourceAttributes(service_version);
  for (const std::string& warning : resource.warnings) spdlog::warn("OTLP resource: {}", warning);
  if (otlp.protocol == OtlpProtocol::kGrpc) {
    tracing::otlp::OtlpGrpcExporterOptions options;
    options.endpoint = otlp.endpoint;
    options.use_tls = otlp.tls;
    options.ca_file = otlp.ca_file;
    options.headers = otlp.headers;
    options.resource_attributes = std::move(resource.attributes);
    options.scope_version = std::string(service_version);
    auto exporter = tracing::otlp::OtlpGrpcExporter::Create(std::move(options));
    if (!exporter.ok()) return exporter.error();
    return std::unique_ptr<tracing::SpanExporter>(std::move(*exporter));
  }
  tracing::otlp::OtlpHttpExporterOptions options;
  options.endpoint = otlp.endpoint;
  options.headers = otlp.headers;
  options.resource_attributes = std::move(resource.attributes);
  options.scope_version = std::string(service_version);
  auto exporter = tracing::otlp::OtlpHttpExporter::Create(std::move(options));
  if (!exporter.ok()) return exporter.error();
  return std::unique_ptr<tracing::SpanExporter>(std::move(*exporter));
}

// Opens the store now, so that a path that cannot work fails the start. A PostgreSQL server that
// cannot be reached yet does not: the proxy serves Spark without it and the exporter connects when
// it can. What waiting cannot fix (a newer schema, a foreign database) fails the start.
Result<std::unique_ptr<tracing::SpanExporter>> StoreExporter(const tracing::store::StoreLocation& location,
                                                             const TracingConfig& config) {
  tracing::store::StoreOptions options;
  options.max_age = config.store_max_age;
  options.max_bytes = config.store_max_bytes;
  auto open = [location, options] { return tracing::store::OpenSpanStore(location, options); };
  auto store = open();
  if (!store.ok()) {
    const bool wait_for_it = location.backend == tracing::store::StoreBackend::kPostgres &&
                             store.error().code == ErrorCode::kUnavailable;
    if (!wait_for_it) return FlagError("store", store.error());
    spdlog::warn("trace store not reachable yet, the proxy starts without it: {}", store.error().message);
  }
  std::unique_ptr<tracing::store::SpanSpool> spool;
  if (config.spool_dir) {
    tracing::store::SpanSpoolOptions spool_options;
    spool_options.directory = !config.spool_dir->empty() ? *config.spool_dir
                              : location.backend == tracing::store::StoreBackend::kSqlite
                                  ? location.target + ".spool"
                                  : "sparktrace-spool";
    spool_options.max_bytes = config.spool_max_bytes;
    spool_options.segment_bytes =
        std::min<std::uint64_t>(spool_options.segment_bytes, config.spool_max_bytes / 4);
    auto opened_spool = tracing::store::SpanSpool::Open(spool_options);
    if (!opened_spool.ok()) return FlagError("spool-dir", opened_spool.error());
    spool = std::move(*opened_spool);
    if (!spool->empty()) {
      spdlog::info("span spool {} holds {} batch(es) from an earlier run; they go to the store first",
                   spool_options.directory.string(), spool->batches());
    }
  }
  std::unique_ptr<tracing::store::SpanStore> opened = store.ok() ? std::move(*store) : nullptr;
  return std::unique_ptr<tracing::SpanExporter>(std::make_unique<tracing::store::StoreSpanExporter>(
      std::move(opened), std::move(open), location.display, tracing::store::StoreSpanExporterOptions{},
      std::move(spool)));
}

}  // namespace

Result<std::unique_ptr<TracingStack>> TracingStack::Create(const TracingConfig& config,
                                                           prometheus::Registry& registry,
                                                           std::string_view service_version) {
  auto sampler = tracing::Sampler::Create(config.sample_ratio);
  if (!sampler.ok()) return sampler.error();
  std::unique_ptr<TracingStack> stack(new TracingStack());  // NOLINT: private constructor
  tracing::SpanPipelineOptions pipeline_options;
  pipeline_options.batch_delay = config.span_batch_delay;
  pipeline_options.max_queue_spans = config.span_queue_max;
  // The store takes a batch in one transaction: under load, bigger ones cost less per span (the
  // commit, and each index page written once per batch). OTLP keeps the default (collectors limit
  // request sizes).
  tracing::SpanPipelineOptions store_pipeline_options = pipeline_options;
  store_pipeline_options.max_batch_spans = 2048;

  if (config.store) {
    auto exporter = StoreExporter(*config.store, config);
    if (!exporter.ok()) return exporter.error();
    stack->pipelines_.push_back(std::make_unique<tracing::SpanPipeline>(
        config.store->backend == tracing::store::StoreBackend::kPostgres ? "postgresql" : "sqlite",
        std::move(*exporter), store_pipeline_options));
    // The store shows what is still running (the trace view's open bars).
    stack->fanout_.Add(*stack->pipelines_.back(), tracing::LiveSpans::kTake);
  }
  if (config.otlp) {
    auto exporter = OtlpExporter(*config.otlp, service_version);
    if (!exporter.ok()) return InvalidArgument("--otlp-endpoint: " + exporter.error().message);
    stack->pipelines_.push_back(
        std::make_unique<tracing::SpanPipeline>("otlp", std::move(*exporter), pipeline_options));
    // A collector gets each span once, when it has ended.
    stack->fanout_.Add(*stack->pipelines_.back(), tracing::LiveSpans::kSkip);
  }
  std::vector<const tracing::SpanPipeline*> pipelines;
  for (const auto& pipeline : stack->pipelines_) pipelines.push_back(pipeline.get());
  stack->pipeline_metrics_ = std::make_shared<tracing::connect::SpanPipelineMetrics>(std::move(pipelines));
  stack->metrics_ = std::make_unique<tracing::connect::TracingMetrics>(registry);
  tracing::connect::OperationRegistryOptions operations;
  operations.linger = config.operation_linger;
  operations.progress = config.progress;
  // Sweep often enough that a short linger (tests, the demo) is honoured closely.
  operations.sweep_interval =
      std::clamp(config.operation_linger / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
  stack->tracer_ = std::make_unique<tracing::connect::SparkConnectTracer>(
      stack->fanout_, stack->ids_, *sampler, *stack->metrics_, operations);
  stack->report_ledger_ = std::make_unique<tracing::AirflowReportLedger>(config.max_reported_attempts);
  stack->airflow_task_route_ = tracing::airflow::AirflowTaskRoute(stack->fanout_, *sampler, *stack->report_ledger_, registry);
  if (!config.event_log_dirs.empty() || !config.spark_ui_url.empty() || config.event_push_max_bytes > 0) {
    feed::EventLogFeedOptions feed_options;
    feed_options.directories = config.event_log_dirs;
    feed_options.spark_ui_url = config.spark_ui_url;
    feed_options.poll_interval = config.event_log_poll;
    feed_options.sample_ratio = config.sample_ratio;
    feed_options.rules = config.rules;
    feed_options.suppressions = config.suppressions;
    feed_options.sql_spans.max_plan_bytes = static_cast<std::size_t>(config.sql_plan_max_bytes);
    if (config.event_push_max_bytes > 0) {
      feed::EventPushOptions push;
      push.max_body_bytes = static_cast<std::size_t>(config.event_push_max_bytes);
      // Room for a few bodies in flight while the feed applies earlier ones.
      push.max_queued_bytes = std::max(push.max_queued_bytes, 4 * push.max_body_bytes);
      feed_options.push = push;
    }
    auto* tracer = stack->tracer_.get();
    auto started = feed::EventLogFeed::Start(
        std::move(feed_options),
        [tracer](std::string_view operation_id) -> std::optional<feed::OperationSpanTarget> {
          auto span = tracer->FindOperationSpan(operation_id);
          if (!span) return std::nullopt;
          feed::OperationSpanTarget target{span->trace_id, span->span_id, span->sampled, std::nullopt};
          // The tracer keeps an empty dag id for an operation without an Airflow identity.
          if (!span->airflow_dag_id.empty()) {
            target.airflow_task = feed::AirflowTask{span->airflow_dag_id, span->airflow_task_id};
          }
          return target;
        },
        stack->fanout_);
    if (!started.ok()) {
      const char* flag = config.event_log_dirs.empty() ? "--spark-ui: " : "--event-log-dir: ";
      return InvalidArgument(flag + started.error().message);
    }
    stack->event_log_feed_ = std::move(*started);
    stack->push_endpoint_ = stack->event_log_feed_->push_endpoint();
    stack->push_needs_token_ = config.event_push_needs_token;
    stack->feed_metrics_ = stack->event_log_feed_->metrics();
  }
  return stack;
}

std::vector<std::shared_ptr<const prometheus::Collectable>> TracingStack::collectables() const {
  std::vector<std::shared_ptr<const prometheus::Collectable>> all = {pipeline_metrics_};
  if (feed_metrics_) all.push_back(feed_metrics_);
  return all;
}

std::vector<admin::PostRoute> TracingStack::admin_routes() const {
  std::vector<admin::PostRoute> routes = {airflow_task_route_};
  if (!push_endpoint_) return routes;
  admin::PostRoute route;
  route.path = "/api/v1/events";
  route.max_body_bytes = push_endpoint_->max_body_bytes();
  // With --admin-token, the token as a Bearer header (unless --event-push-without-token): pushed
  // jobs join the operations their job tags name, in whichever task's trace. Bodies are never logged.
  route.needs_admin_token = push_needs_token_;
  route.handler = [endpoint = push_endpoint_](const admin::HttpRequest& request) {
    feed::PushRequest push;
    push.query = request.query;
    push.app_header = request.header("X-Spark-App-Id");
    push.content_encoding = request.header("Content-Encoding");
    push.body = request.body;
    feed::PushReply reply = endpoint->Push(push);
    admin::HttpResponse response{reply.status, "application/json", std::move(reply.body), {}};
    if (reply.retry_after_seconds)
      response.headers.emplace_back("Retry-After", std::to_string(*reply.retry_after_seconds));
    return response;
  };
  routes.push_back(std::move(route));
  return routes;
}

TracingStack::~TracingStack() { Shutdown(); }

void TracingStack::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  // The feed's last poll may still hang spans under operations: before the tracer ends them.
  if (event_log_feed_) event_log_feed_->PollNow();
  if (tracer_) tracer_->Shutdown();
  event_log_feed_.reset();
  for (auto& pipeline : pipelines_) pipeline->Shutdown();
}

}  // namespace sparktrace::cli
