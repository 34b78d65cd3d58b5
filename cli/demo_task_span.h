#pragma once
// The Airflow task's own span in `sparktrace demo`. In production Airflow's OpenTelemetry
// integration exports it to a collector, and the proxy's spans hang under it through the
// `traceparent` the task sends. The demo plays the task, so it stores that span itself, next to
// the proxy's: the trace then has its root, instead of operations whose parent is missing.
//
// Threads: any. The store allows a second writer process; SQLite's lock serialises it with the
// proxy's exporter (waits bounded by the store's busy timeout).

#include <cstdint>
#include <string>

#include "common/result.h"
#include "tracing/airflow_identity.h"
#include "tracing/span.h"
#include "tracing/store/store_location.h"

namespace sparktrace::cli {

// Named "airflow.task", kind INTERNAL, with the airflow.* attributes the store indexes.
tracing::Span MakeAirflowTaskSpan(const tracing::TraceId& trace_id, const tracing::SpanId& span_id,
                                  const tracing::AirflowIdentity& airflow, std::uint64_t start_unix_nano,
                                  std::uint64_t end_unix_nano);

// Opens the store at `path` as a writer (creating it if needed) and writes `span`.
Result<void> StoreSpan(const tracing::store::StoreLocation& store, const tracing::Span& span);

}  // namespace sparktrace::cli
