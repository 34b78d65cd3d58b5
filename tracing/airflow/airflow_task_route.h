#pragma once
// POST /api/v1/airflow/task-attempts on the admin port: Airflow's own task attempt, reported by the
// Airflow plugin when the attempt starts using Spark and when it ends (docs/tracing.md, "Airflow's
// own task"). Each report becomes the attempt's "airflow.task" span (tracing/airflow_task_report.h);
// a later report of the same attempt replaces the earlier, in the store, by span id. A report speaks
// only for its own attempt (tracing/airflow_report_ledger.h, docs/threat-model.md): one that would
// take another attempt's span, give its attempt a second span, or rewrite what the attempt's earlier
// reports fixed (start, operator, an earlier end, a finished state) is 409, naming the field.
//
// Where a report goes:
//   - "running": to the store only (a live version; an OTLP span cannot be replaced);
//   - the final state, when the span's ids are sparktrace's (derived from the attempt): to every
//     sink, OTLP included;
//   - the final state, when the task's span context is Airflow's own (Airflow exports that span to
//     its collector itself): to the store only, so a shared tracing backend never sees the id twice.
// A trace the proxy does not sample is not stored either (the decision the attempt's calls got).
//
// The route needs the admin token when the proxy has one (--admin-token): like the trace view's API.
//
// Threads: the handler runs on the admin loop thread; it never blocks (SpanSink::Submit returns at once).

#include <prometheus/registry.h>

#include "admin/admin_server.h"
#include "tracing/airflow_report_ledger.h"
#include "tracing/sampler.h"
#include "tracing/span_sink.h"

namespace sparktrace::tracing::airflow {

inline constexpr std::string_view kAirflowTaskReportPath = "/api/v1/airflow/task-attempts";

// `sink` and `ledger` must outlive the route (and the admin server that calls it). Registers
// sparktrace_airflow_task_reports_total{result="accepted|not_sampled|invalid|conflict"} and the gauge
// sparktrace_airflow_task_report_attempts in `registry`.
admin::PostRoute AirflowTaskRoute(tracing::SpanSink& sink, tracing::Sampler sampler,
                                  tracing::AirflowReportLedger& ledger, prometheus::Registry& registry);

}  // namespace sparktrace::tracing::airflow
