#pragma once
// What the report route remembers of the Airflow task reports it accepted, so that a report can only
// speak for its own attempt (docs/threat-model.md). Per attempt identity: the span context its first
// report took, its start, its operator, its latest end and state. A report is refused (409, naming the
// field) when it
//   - names a span context another attempt's report took, or
//   - gives its attempt a second span context (a second trace in the attempt),
//   - moves the start, changes the operator, moves the end earlier, or changes a finished state
//     (success, failed, skipped, upstream_failed, removed, up_for_retry: the try is over; a later try
//     has its own identity).
// A report repeated as it was is accepted again (the plugin retries a report it got no answer to).
//
// The ledger is bounded (--max-reported-attempts): past it the attempt reported least recently is
// forgotten. What it forgets, and what another proxy sharing the store accepted, the store's own rule
// still holds back (tracing/store/span_rows/span_table_sql.h: a report's span replaces only its attempt's
// task span, same start, end no earlier); the state and operator rules are this ledger's alone, which is why
// k8s/base turns the admin token on.
//
// Threads: thread-safe (a mutex; the admin loop is its only caller in practice).

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/result.h"
#include "tracing/airflow_task_report.h"
#include "tracing/span.h"

namespace sparktrace::tracing {

inline constexpr std::size_t kDefaultMaxReportedAttempts = 50'000;

// Whether an Airflow state ends the try: no report of the same try may change it afterwards.
bool IsFinishedAirflowState(std::string_view state);

class AirflowReportLedger {
 public:
  explicit AirflowReportLedger(std::size_t max_attempts) : max_attempts_(max_attempts) {}

  // Checks `report` (whose span takes `context`) against what the attempt's and other attempts'
  // earlier reports established, and records it when it passes. The error names the field at fault;
  // its code is kInvalidArgument, its message never echoes a value.
  Result<void> Admit(const AirflowTaskReport& report, const TaskSpanContext& context);

  std::size_t size() const;
  std::uint64_t forgotten() const;

 private:
  struct Attempt {
    std::string identity_key;
    TraceId trace_id{};
    SpanId span_id{};
    std::uint64_t start_unix_nano = 0;
    std::uint64_t end_unix_nano = 0;
    std::string state;
    std::string operator_class;
  };
  using Recency = std::list<Attempt>;  // most recently reported first

  static std::string ContextKey(const TraceId& trace_id, const SpanId& span_id);
  Result<void> CheckAgainst(const Attempt& earlier, const AirflowTaskReport& report,
                            const TaskSpanContext& context) const;
  void Forget(Recency::iterator attempt);

  const std::size_t max_attempts_;
  mutable std::mutex mu_;
  Recency recency_;
  std::unordered_map<std::string, Recency::iterator> by_identity_;
  std::unordered_map<std::string, Recency::iterator> by_context_;
  std::uint64_t forgotten_ = 0;
};

}  // namespace sparktrace::tracing
