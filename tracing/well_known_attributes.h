#pragma once
// Attribute keys that tracing/ gives meaning to beyond carrying them: the SQLite store extracts them
// into indexed columns, the trace renderer shows them on each span's line. Producers (the operation
// tracker, the listener) must use these spellings for lookup by operation or Airflow task to work.

#include <string_view>

namespace sparktrace::tracing {

inline constexpr std::string_view kSparkConnectOperationIdKey = "spark.connect.operation_id";
inline constexpr std::string_view kSparkConnectSessionIdKey = "spark.connect.session_id";
inline constexpr std::string_view kAirflowDagIdKey = "airflow.dag_id";
inline constexpr std::string_view kAirflowTaskIdKey = "airflow.task_id";
inline constexpr std::string_view kAirflowRunIdKey = "airflow.run_id";
inline constexpr std::string_view kAirflowTryNumberKey = "airflow.try_number";  // int64 (or decimal string)
// Shown by the renderer only; the store keeps them in the attributes JSON.
inline constexpr std::string_view kSparkConnectResponseRowsKey = "spark.connect.response.rows";
inline constexpr std::string_view kSparkConnectResponseBytesKey = "spark.connect.response.bytes";
inline constexpr std::string_view kSparkConnectOperationOutcomeKey = "spark.connect.operation.outcome";

}  // namespace sparktrace::tracing
