#include "tracing/connect/spark_connect_tracer.h"

#include <string_view>
#include <utility>
#include <vector>

#include "tracing/airflow_identity.h"
#include "tracing/connect/operation_span.h"
#include "tracing/connect/rpc_attributes.h"
#include "tracing/span_vocabulary.h"
#include "tracing/trace_context.h"

namespace sparktrace::tracing::connect {
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
  metrics_.TracedCall(trace.origin);

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
  if (operation.progress.any()) metrics_.ProgressEventsThinned(operation.progress.thinned());
  if (operation.sampled) spans_.Submit(BuildOperationSpan(operation, clock_));
}

}  // namespace sparktrace::tracing::connect
