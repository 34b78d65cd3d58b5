#pragma once
// Which stored spans make up one Airflow task attempt: the spans carrying its identity (airflow.*
// attributes, set by the proxy on every RPC and operation span of the attempt) and every span below
// them (the driver's lifecycle, job, stage and phase spans carry no identity of their own). The same
// rule as the store's task index (tracing/task_index.h), so that the list and the page agree.
//
// Pure functions; thread-safe.

#include <optional>
#include <vector>

#include "tracing/span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

// The identity a span carries, or nullopt when it has no airflow.dag_id and airflow.task_id.
// try number and map index may be integers or decimal strings (headers forwarded as text).
std::optional<tracing::store::TaskAttemptKey> IdentityOf(const tracing::Span& span);

// The spans of `trace` (one trace's spans) that belong to `attempt`, in the input's order.
std::vector<tracing::Span> SpansOfAttempt(std::vector<tracing::Span> trace,
                                          const tracing::store::TaskAttemptKey& attempt);

}  // namespace sparktrace::traceview
