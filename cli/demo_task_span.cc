#include "cli/demo_task_span.h"

#include <utility>

#include "tracing/store/open_span_store.h"
#include "tracing/well_known_attributes.h"

namespace sparktrace::cli {

tracing::Span MakeAirflowTaskSpan(const tracing::TraceId& trace_id, const tracing::SpanId& span_id,
                                  const tracing::AirflowIdentity& airflow, std::uint64_t start_unix_nano,
                                  std::uint64_t end_unix_nano) {
  tracing::Span span;
  span.trace_id = trace_id;
  span.span_id = span_id;
  span.name = "airflow.task";
  span.kind = tracing::SpanKind::kInternal;
  span.start_time_unix_nano = start_unix_nano;
  span.end_time_unix_nano = end_unix_nano;
  span.attributes = {
      {std::string(tracing::kAirflowDagIdKey), airflow.dag_id},
      {std::string(tracing::kAirflowTaskIdKey), airflow.task_id},
      {std::string(tracing::kAirflowRunIdKey), airflow.run_id},
      {std::string(tracing::kAirflowTryNumberKey), airflow.try_number},
  };
  return span;
}

Result<void> StoreSpan(const tracing::store::StoreLocation& location, const tracing::Span& span) {
  auto store = tracing::store::OpenSpanStore(location, {});
  if (!store.ok()) return store.error();
  auto written = (*store)->Write(std::span<const tracing::Span>(&span, 1));
  if (!written.ok()) return written.error();
  return {};
}

}  // namespace sparktrace::cli
