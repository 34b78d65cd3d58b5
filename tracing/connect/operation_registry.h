#pragma once
// Operations by Spark Connect operation id, shared by every proxy worker: ReattachExecute,
// ReleaseExecute and Interrupt find their ExecutePlan's operation here whatever connection they
// arrive on. Decides when an operation ends (docs/tracing.md, "Operation spans") and hands it to
// the OperationSink exactly once.
//
// Threads: every method is thread-safe (one mutex; calls take it a few times per RPC, never per
// message). The sink is called without the mutex held. A sweeper thread ends operations nobody
// came back for within `linger`.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tracing/connect/operation.h"

namespace sparktrace::tracing::connect {

class OperationSink {
 public:
  virtual ~OperationSink() = default;
  // `operation` is final; `operation.ending` is set.
  virtual void OnOperationEnded(const Operation& operation) = 0;
};

struct OperationRegistryOptions {
  std::chrono::milliseconds linger{30'000};
  std::size_t max_operations = 100'000;
  std::chrono::milliseconds sweep_interval{1000};
  // Ended operations whose span stays addressable (EndedSpanOf), the oldest forgotten first.
  std::size_t max_remembered_ended = 10'000;
  ProgressOptions progress;
};

// How a call of an operation ended, as far as the operation cares.
struct OperationCallEnd {
  enum class Role : std::uint8_t {
    kStream,      // ExecutePlan or ReattachExecute: its status may end the operation
    kReleaseAll,  // ReleaseExecute(release_all)
    kOther,       // ReleaseExecute(release_until), Interrupt, a duplicate ExecutePlan
  };
  Role role = Role::kOther;
  SteadyTime at;
  int status_code = 0;
  std::string status_message;
  std::int64_t rows = 0;
  std::uint64_t arrow_bytes = 0;
  std::uint64_t batches = 0;
};

// Where an operation's span is: enough to parent other spans to it. With the Airflow task the
// operation's ExecutePlan named (empty when none), which the driver-event feed exports per
// application (spark_application_airflow_info).
struct OperationSpanInfo {
  TraceId trace_id{};
  SpanId span_id{};
  bool sampled = false;
  std::string airflow_dag_id;
  std::string airflow_task_id;

  static OperationSpanInfo Of(const Operation& operation) {
    return {operation.trace_id, operation.span_id, operation.sampled, operation.airflow_dag_id,
            operation.airflow_task_id};
  }
};

struct InterruptRequest {
  enum class Scope : std::uint8_t { kSession, kTag, kOperation };
  Scope scope = Scope::kSession;
  std::string session_id;
  std::string target;  // the tag or the operation id
  SteadyTime at;
  std::vector<Attribute> attributes;  // of the "interrupt" event
};

// What a ReattachExecute found for its operation id (OperationRegistry::Reattach).
struct ReattachTarget {
  // The open operation the call belongs to, the call counted as open; nullptr when `ended` is set.
  std::shared_ptr<Operation> operation;
  bool first_seen = false;                 // `operation` was started by this reattach
  std::optional<OperationSpanInfo> ended;  // the operation had already ended here
};

// Whether a failed ExecutePlan/ReattachExecute status leaves the execution for the client to
// reattach to (Spark's clients retry these), rather than ending it.
bool IsReattachableFailure(int status_code, std::string_view message);

class OperationRegistry {
 public:
  explicit OperationRegistry(OperationSink& sink, OperationRegistryOptions options = {});
  ~OperationRegistry();  // stops the sweeper; does not end operations (see Shutdown)
  OperationRegistry(const OperationRegistry&) = delete;
  OperationRegistry& operator=(const OperationRegistry&) = delete;

  // A new ExecutePlan. `operation` has its fixed fields set; open_calls becomes 1. When its id is
  // already known and taken by an open operation, that one is returned instead and the call joins
  // it as an ordinary child (Spark refuses the duplicate). The bool says whether it is new.
  std::pair<std::shared_ptr<Operation>, bool> Start(Operation operation);

  // The id arrived in the first response of an ExecutePlan that did not name one.
  void Identify(const std::shared_ptr<Operation>& operation, const std::string& operation_id);

  // A ReattachExecute / ReleaseExecute / Interrupt for `operation_id`: the open operation, which
  // counts the call and records `event` (unless its name is empty); nullptr when unknown or ended.
  std::shared_ptr<Operation> Attach(const std::string& operation_id, OperationEvent event, bool is_reattach);

  // A ReattachExecute for `operation_id`: the open operation, as Attach(…, true) gives it; else the
  // span of the operation if it already ended here. Otherwise this process never saw the operation
  // start (another replica saw its ExecutePlan, the proxy restarted since, or the client began with
  // a reattach): `unseen`, with its fixed fields set, becomes the operation, this call its first
  // (open_calls 1, one reattach, `event` recorded). One lock for all of it, so that concurrent
  // reattaches of one unseen id start one operation.
  ReattachTarget Reattach(const std::string& operation_id, OperationEvent event, Operation unseen);

  // Milestones of an operation's result stream; the first of each kind counts.
  void RecordFirstResponse(const std::shared_ptr<Operation>& operation, SteadyTime at,
                           const std::string& server_side_session_id);
  void RecordFirstBatch(const std::shared_ptr<Operation>& operation, SteadyTime at);
  void RecordResultComplete(const std::shared_ptr<Operation>& operation, SteadyTime at);

  // An execution_progress response of the operation's result stream. Returns a copy of the
  // operation, progress included, when a live snapshot of its span is due (the first update, then
  // at most every options.progress.snapshot_interval); nullopt otherwise, or once it has ended.
  // Only a call counted open on the operation may call this (the stream the response came on):
  // the operation then cannot end, and its final span be submitted, before the caller has
  // submitted the snapshot, so the final version always reaches the store last.
  std::optional<Operation> RecordProgress(const std::shared_ptr<Operation>& operation,
                                          const spark_connect::ResponseInfo& response, SteadyTime at);

  void CallEnded(const std::shared_ptr<Operation>& operation, const OperationCallEnd& end);

  // An Interrupt request arrived: marks the open operations it names (by id, by tag within the
  // session, or the whole session) with an "interrupt" event carrying `attributes`. Returns the
  // operation the Interrupt call becomes a child of — the one named by id, or the oldest one
  // matching the tag — counted as an open call like Attach; nullptr for a session-wide interrupt.
  std::shared_ptr<Operation> InterruptRequested(const InterruptRequest& request);

  // The Interrupt response named these operations: they end as interrupted.
  void Interrupted(const std::vector<std::string>& operation_ids, SteadyTime at,
                   const std::vector<Attribute>& interrupt_attributes);
  // ReleaseSession succeeded: the session's open operations are released.
  void SessionReleased(const std::string& session_id, SteadyTime at);

  // Ends every operation not yet ended as unfinished (at `at`), whatever its open calls. For
  // proxy shutdown, after the calls have drained.
  void Shutdown(SteadyTime at);

  // Ends lingering operations now; the sweeper thread calls it every sweep_interval.
  void Sweep(SteadyTime now);

  std::size_t open_operations() const;

  // The span of the open operation `operation_id`, for spans that other sources (the driver's
  // listener events) hang under it; nullopt when it is not open.
  std::optional<OperationSpanInfo> SpanOf(std::string_view operation_id) const;

  // The span of an operation that has ended, whatever its outcome (the last
  // max_remembered_ended), for what comes after its end: the ReleaseExecute(release_all) a client
  // sends after a failed ExecutePlan, a ReattachExecute that comes too late, driver events.
  std::optional<OperationSpanInfo> EndedSpanOf(std::string_view operation_id) const;

 private:
  // Marks the ending (if none yet); returns whether the operation is ready to hand over.
  static bool Decide(Operation& operation, OperationEnding ending);
  // Removes an operation that is ready from the index and queues it for the sink. By value: the
  // caller's pointer may be the index entry this erases.
  void Retire(std::shared_ptr<Operation> operation, std::vector<std::shared_ptr<Operation>>& out);
  // Adds a new operation (with its id) to the index, making room first if the index is full.
  std::shared_ptr<Operation> Track(Operation operation, std::vector<std::shared_ptr<Operation>>& evicted);
  void Deliver(const std::vector<std::shared_ptr<Operation>>& ended);
  void EvictOldestIdle(SteadyTime now, std::vector<std::shared_ptr<Operation>>& out);
  void RunSweeper();

  OperationSink& sink_;
  const OperationRegistryOptions options_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<Operation>> by_id_;
  std::unordered_map<std::string, OperationSpanInfo> ended_;  // by operation id
  std::deque<std::string> ended_order_;                       // oldest first, for the bound
  bool stopping_ = false;
  std::condition_variable wake_sweeper_;
  std::thread sweeper_;
};

}  // namespace sparktrace::tracing::connect
