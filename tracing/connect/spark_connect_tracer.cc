#include "tracing/connect/spark_connect_tracer.h"

#include <string_view>
#include <utility>
#include <vector>

#include "tracing/airflow_identity.h"
#include "tracing/connect/rpc_attributes.h"
#include "tracing/span_vocabulary.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {
namespace {

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace

SparkConnectTracer::SparkConnectTracer(SpanSink& spans, IdGenerator& ids, Sampler sampler,
                                       TracingMetrics& metrics, OperationRegistryOptions operations)
    : spans_(spans),
      ids_(ids),
      sampler_(sampler),
      metrics_(metrics),
      operations_(*this, operations),
      services_{operations_, spans_, metrics_, ids_, clock_} {}

std::unique_ptr<proxy::CallTap> SparkConnectTracer::OnCallStarted(const proxy::CallStart& start) {
  // Only text headers are read (traceparent, tracestate, x-airflow-*): `-bin` values, still
  // base64 here, never are.
  const std::vector<MetadataEntry> metadata(start.client_metadata.begin(), start.client_metadata.end());
  const ClientTraceContext client = ExtractClientContext(metadata);
  if (client.traceparent_error) metrics_.InvalidTraceparent(TraceparentErrorName(*client.traceparent_error));
  if (client.tracestate_error) metrics_.InvalidTracestate(TracestateErrorName(*client.tracestate_error));
  const AirflowIdentityParse airflow = ParseAirflowIdentity(metadata);
  if (airflow.error) metrics_.InvalidAirflowIdentity(AirflowIdentityErrorName(*airflow.error));

  RequestTraceContext trace = ResolveTraceContext(client, airflow.identity, ids_, sampler_);
  metrics_.TracedCall(TraceOriginName(trace.origin));

  const TraceId trace_id = trace.trace_id;
  const bool sampled = trace.sampled;
  const bool keep_tracestate = trace.from_client() && !client.tracestate_error;
  auto tracer = std::make_unique<CallTracer>(services_, start, std::move(trace), airflow.identity);
  // Upstream, the call's parent is our span, in the client's trace (or the one started here).
  start.upstream_headers.Set(std::string(kTraceparentHeader),
                             FormatTraceparent(trace_id, tracer->span_id(), sampled));
  // A tracestate belongs to the traceparent it came with: gone with it, or when invalid.
  if (!keep_tracestate) start.upstream_headers.Set(std::string(kTracestateHeader), std::nullopt);
  return tracer;
}

void SparkConnectTracer::Shutdown() { operations_.Shutdown(std::chrono::steady_clock::now()); }

std::optional<OperationSpanInfo> SparkConnectTracer::FindOperationSpan(std::string_view operation_id) const {
  if (auto open = operations_.SpanOf(operation_id)) return open;
  return operations_.EndedSpanOf(operation_id);
}

void SparkConnectTracer::OnOperationEnded(const Operation& operation) {
  const SteadyTime end = operation.end_time();
  std::optional<std::chrono::steady_clock::duration> time_to_first_batch;
  if (operation.first_batch_at) time_to_first_batch = *operation.first_batch_at - operation.started_at;
  metrics_.OperationEnded(operation.ending->outcome, end - operation.started_at, time_to_first_batch);
  if (operation.sampled) spans_.Submit(BuildOperationSpan(operation));
}

Span SparkConnectTracer::BuildOperationSpan(const Operation& operation) const {
  Span span;
  span.trace_id = operation.trace_id;
  span.span_id = operation.span_id;
  span.parent_span_id = operation.parent_span_id;
  span.trace_state = operation.trace_state;
  span.name = std::string(kSparkConnectOperationSpanName);
  span.kind = SpanKind::kInternal;
  span.start_time_unix_nano = clock_.UnixNanos(operation.started_at);
  span.end_time_unix_nano = clock_.UnixNanos(operation.end_time());

  auto& attributes = span.attributes;
  if (!operation.operation_id.empty())
    attributes.push_back({std::string(kSparkConnectOperationIdKey), operation.operation_id});
  attributes.insert(attributes.end(), operation.attributes.begin(), operation.attributes.end());
  if (!operation.server_side_session_id.empty()) {
    attributes.push_back(
        {std::string(tracing::kSparkConnectServerSideSessionIdKey), operation.server_side_session_id});
  }
  const OperationEnding& ending = *operation.ending;
  attributes.push_back(
      {std::string(kSparkConnectOperationOutcomeKey), std::string(OperationOutcomeName(ending.outcome))});
  attributes.push_back({std::string(tracing::kSparkConnectResultRowsKey), operation.rows});
  attributes.push_back({std::string(tracing::kSparkConnectResultArrowBytesKey),
                        static_cast<std::int64_t>(operation.arrow_bytes)});
  attributes.push_back(
      {std::string(tracing::kSparkConnectResultBatchesKey), static_cast<std::int64_t>(operation.batches)});
  attributes.push_back(
      {std::string(tracing::kSparkConnectReattachCountKey), static_cast<std::int64_t>(operation.reattaches)});
  if (operation.first_batch_at) {
    attributes.push_back({std::string(tracing::kSparkConnectTimeToFirstBatchMsKey),
                          Millis(*operation.first_batch_at - operation.started_at)});
  }
  if (operation.dropped_events > 0) {
    attributes.push_back(
        {std::string(tracing::kDroppedEventsKey), static_cast<std::int64_t>(operation.dropped_events)});
  }
  for (const OperationEvent& event : operation.events) {
    span.events.push_back({event.name, clock_.UnixNanos(event.at), event.attributes});
  }
  if (ending.outcome == OperationOutcome::kFailed) {
    span.status_code = StatusCode::kError;
    span.status_message = ending.status_message;
  }
  return span;
}

}  // namespace sparktrace::tracing::connect
