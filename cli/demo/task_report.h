#pragma once
// The Airflow task's report in `sparktrace demo`. In production the Airflow plugin reports the task
// attempt (start, end, state, operator) to the proxy's admin port; the demo plays the task, so it
// sends the same reports, over HTTP, to its proxy: "running" when the task starts calling Spark and
// the final state when it ends. The proxy turns them into the attempt's "airflow.task" span, the
// root its operation spans hang under (tracing/airflow/airflow_task_route.h).
//
// Threads: any; blocks the caller for at most `timeout` per report.

#include <chrono>
#include <string>

#include "common/result.h"
#include "tracing/airflow_task_report.h"

namespace sparktrace::cli::demo {

// POSTs `report` to http://<admin_address>/api/v1/airflow/task-attempts (HTTP/1.1, one request per
// connection). Fails with the answer's status line when it is not 202, kUnavailable when nothing
// answers within `timeout`.
Result<void> SendAirflowTaskReport(const std::string& admin_address, const tracing::AirflowTaskReport& report,
                                   std::chrono::milliseconds timeout);

}  // namespace sparktrace::cli::demo
