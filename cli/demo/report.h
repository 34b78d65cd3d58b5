#pragma once
// What `sparktrace demo` prints once the workload's spans are stored: the trace as a tree, how
// each operation ended, and where to look next (admin URL, `sparktrace traces`, the client URL).
//
// Threads: pure functions of their arguments, writing to `out`.

#include <ostream>
#include <span>
#include <string>

#include "cli/demo/workload.h"
#include "tracing/span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::cli::demo {

struct DemoEndpoints {
  std::string proxy;          // HOST:PORT for Spark Connect clients
  std::string admin;          // HOST:PORT of the proxy's admin HTTP
  std::string store;          // the trace database, as given on the command line
  std::string sparktrace;     // how to invoke this binary from the working directory
  std::string event_log_dir;  // where the simulator wrote this run's Spark event log
  std::string rules;          // the proxy's --rules file (time floors scaled to the demo)
};

// The tree (tracing::RenderTraceText), then one line per operation with the outcome its span
// recorded, "(expected ...)" appended where that is not the one the workload aimed for.
void PrintTrace(std::ostream& out, std::span<const tracing::Span> spans,
                std::span<const DemoOperation> operations);

// "cost:    0.12 core-h allocated (...), settled: the task list sorts by it at http://…/?sort=-cost".
void PrintSettledCost(std::ostream& out, const DemoEndpoints& endpoints,
                      const tracing::store::TaskAttemptRow& row);

// The trace view's page of the demo's Airflow task attempt on the proxy's admin port.
std::string TraceViewUrl(const DemoEndpoints& endpoints, const tracing::AirflowIdentity& airflow);

void PrintNextSteps(std::ostream& out, const DemoEndpoints& endpoints, const tracing::TraceId& trace_id,
                    const tracing::AirflowIdentity& airflow);

}  // namespace sparktrace::cli::demo
