#pragma once
// The Spark Connect calls of one Airflow task, made by `sparktrace demo` through the proxy the
// way PySpark in an Airflow task makes them: every call carries the task's `traceparent` and the
// Airflow identity headers (x-airflow-dag-id, -task-id, -run-id, -try-number).
//
// In order: Config (get), AnalyzePlan (spark version, schema of the query); the query as a
// reattachable ExecutePlan that the simulator cuts, resumed by ReattachExecute from the last
// response id on a new connection, then ReleaseExecute(release_all); a write command
// (WriteOperation, not reattachable); a slow query interrupted by an Interrupt by operation id
// from another connection, as Airflow's on_kill would. Every call has a deadline.
//
// The cut depends on the simulator's --stream-cut-bytes: kDemoStreamCutBytes below, which the
// demo passes to it. Threads: runs on the calling thread, which it blocks until done.

#include <chrono>
#include <ostream>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/airflow_identity.h"

namespace sparktrace::cli::demo {

// The simulator's --stream-cut-bytes for the workload: the query's first stream is cut after its
// second 40KiB batch, and the reattached stream (one batch and result_complete) is not.
inline constexpr const char* kDemoStreamCutBytes = "64KiB";

struct DemoWorkloadOptions {
  std::string target;       // the proxy, HOST:PORT
  std::string traceparent;  // sent on every call
  tracing::AirflowIdentity airflow;
  std::chrono::milliseconds call_deadline{std::chrono::seconds(10)};
  // The task's own Python between its calls (reading inputs, building the next DataFrame, publishing
  // a summary): this long before the first call, after each operation and after the last. Real
  // tasks spend much of their time there; the trace view shows it as "outside Spark".
  std::chrono::milliseconds task_code{0};
};

// One Spark Connect execution the workload started, and how it should end.
struct DemoOperation {
  std::string label;             // "query", "write", "slow query"
  std::string operation_id;      // chosen by the client, as PySpark does
  std::string expected_outcome;  // spark.connect.operation.outcome: "completed", "interrupted"
};

// Makes the calls, printing one line per call to `out`. Returns the executions started; fails at
// the first call that does not answer as a Spark Connect server would, naming the call and status.
Result<std::vector<DemoOperation>> RunDemoWorkload(const DemoWorkloadOptions& options, std::ostream& out);

}  // namespace sparktrace::cli::demo
