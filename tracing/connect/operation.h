#pragma once
// One Spark Connect execution as the proxy sees it: the calls that make it up (ExecutePlan, then
// maybe ReattachExecute, ReleaseExecute, Interrupt, on any connection) and how it ended. It becomes
// one `spark_connect.operation` span (docs/tracing.md, "Operation spans").
//
// Threads: an Operation is only read or changed under OperationRegistry's mutex, except by the
// OperationSink once the registry has handed it over (nothing changes it after that).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/connect/operation_progress.h"
#include "tracing/span.h"

namespace sparktrace::tracing::connect {

using SteadyTime = std::chrono::steady_clock::time_point;

enum class OperationOutcome : std::uint8_t {
  kCompleted,    // result complete (and released, if reattachable), or a Spark 3.4 stream's end
  kFailed,       // a status that ends the execution
  kInterrupted,  // named by an Interrupt response
  kReleased,     // ReleaseExecute(release_all) or ReleaseSession before the result was complete
  kAbandoned,    // nobody came back for it within the linger time
  kUnfinished,   // still open when the proxy stopped
};

// "completed", "failed", "interrupted", "released", "abandoned", "unfinished".
std::string_view OperationOutcomeName(OperationOutcome outcome);
inline constexpr std::size_t kOperationOutcomeCount = 6;

// An event whose wall-clock time is worked out when the span is built.
struct OperationEvent {
  std::string name;
  SteadyTime at;
  std::vector<Attribute> attributes;
};

struct OperationEnding {
  SteadyTime at;
  OperationOutcome outcome = OperationOutcome::kCompleted;
  int status_code = 0;  // gRPC code of a failure
  std::string status_message;
};

struct Operation {
  // Fixed when the ExecutePlan arrives.
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};
  std::string trace_state;
  bool sampled = false;
  SteadyTime started_at;
  std::vector<Attribute> attributes;  // session, user, tags, plan kind, Airflow identity, …
  bool reattachable = false;
  std::string session_id;
  std::vector<std::string> tags;  // what an Interrupt by tag matches
  // The Airflow task of the ExecutePlan's identity headers (empty: none), apart from `attributes`
  // so that the listener can read it back cheaply (OperationSpanInfo). Dag and task id only: the
  // run id and try number are per attempt, which no consumer of this may turn into a label.
  std::string airflow_dag_id;
  std::string airflow_task_id;

  // Learnt along the way.
  std::string operation_id;  // from the request, else the first response; empty until known
  std::string server_side_session_id;
  int open_calls = 0;
  SteadyTime last_activity;  // for the linger sweep
  SteadyTime last_call_end;  // the span never ends before its last call
  std::optional<SteadyTime> first_response_at;
  std::optional<SteadyTime> first_batch_at;
  std::optional<SteadyTime> result_complete_at;
  std::int64_t rows = 0;
  std::uint64_t arrow_bytes = 0;
  std::uint64_t batches = 0;
  std::uint32_t reattaches = 0;
  std::vector<OperationEvent> events;  // at most kMaxEvents; later ones are counted only
  std::uint32_t dropped_events = 0;
  OperationProgress progress;  // Spark 4's execution_progress; none from older servers

  // An Interrupt naming this operation reached the proxy: a failure of its stream from now on is
  // the interrupt's doing, whichever of the two answers Spark sends first.
  bool interrupt_requested = false;

  std::optional<OperationEnding> ending;  // decided; takes effect once open_calls is 0
  bool ended = false;                     // handed to the sink

  static constexpr std::size_t kMaxEvents = 128;

  void AddEvent(std::string name, SteadyTime at, std::vector<Attribute> event_attributes = {}) {
    if (events.size() >= kMaxEvents) {
      ++dropped_events;
      return;
    }
    events.push_back({std::move(name), at, std::move(event_attributes)});
  }
  // When the span ends: at the ending, or at its last call if that ended later.
  SteadyTime end_time() const { return ending && ending->at > last_call_end ? ending->at : last_call_end; }
};

}  // namespace sparktrace::tracing::connect
