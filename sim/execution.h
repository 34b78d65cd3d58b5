#pragma once
// One simulated Spark Connect operation: the responses of an ExecutePlan, produced at the
// configured pace, buffered for ReattachExecute until ReleaseExecute frees them.
//
// Threads: every method is thread-safe. RPC handler threads call Next() (blocking), while
// Interrupt/Release/Attach arrive from other RPCs and wake them.
// Ownership: shared by ExecutionRegistry and the stream handlers attached to it.

#include <grpcpp/support/status.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "spark/connect/base.pb.h"

namespace sparktrace::sim {

// What one ExecutePlan call asked for (flags, overridden by x-sim-* metadata).
struct ExecutionShape {
  std::int64_t batches = 0;
  std::uint64_t batch_bytes = 0;
  std::chrono::milliseconds batch_interval{0};
  std::optional<grpc::StatusCode> fail_code;  // fail instead of producing response #fail_after
  std::int64_t fail_after = 0;
  // Spark 4's execution_progress: this many progress responses before the batches, a pace apart,
  // over a scan stage of `progress_tasks` tasks and a reduce stage of a quarter as many (0: none).
  std::int64_t progress_steps = 0;
  std::int64_t progress_tasks = 0;
};

struct ExecutionIds {
  std::string session_id;
  std::string server_side_session_id;
  std::string operation_id;
  std::vector<std::string> tags;
};

class Execution {
 public:
  using Clock = std::chrono::steady_clock;

  struct Step {
    enum class Kind { kResponse, kEnd, kCut, kError };
    Kind kind = Kind::kEnd;
    spark::connect::ExecutePlanResponse response;  // kResponse
    grpc::Status status;                           // kError
  };

  Execution(ExecutionIds ids, bool reattachable, ExecutionShape shape);

  const ExecutionIds& ids() const { return ids_; }
  bool reattachable() const { return reattachable_; }
  // Responses in all: the progress ones, the batches, plus result_complete when reattachable.
  std::int64_t total_responses() const;

  // Makes the caller the one attached stream; a previously attached stream's next Next()
  // fails with INVALID_CURSOR.DISCONNECTED, as in Spark. Returns the attachment token.
  std::uint64_t Attach();

  // Index of the response after `last_response_id`, or an INTERNAL status Spark-style.
  grpc::Status IndexAfter(const std::string& last_response_id, std::int64_t* index) const;

  // Blocks until response `index` exists (then returns it), the execution ends, or — while
  // waiting — `cut_deadline` passes (kCut) or `client_gone()` turns true.
  Step Next(std::uint64_t attachment, std::int64_t index, Clock::time_point cut_deadline,
            const std::function<bool()>& client_gone);

  // Stops a running execution; attached streams end with OPERATION_CANCELED. Returns false
  // when it had already produced everything (Spark does not report finished operations).
  bool Interrupt();

  // Frees buffered responses up to and including `response_id` (unknown ids are ignored).
  void ReleaseUntil(const std::string& response_id);
  // Frees buffered responses up to and including index `index`.
  void ReleaseThrough(std::int64_t index);

  // Number of responses currently kept for replay.
  std::size_t buffered_responses() const;

 private:
  enum class State { kRunning, kProduced, kFailed, kCancelled };

  // Produces response `produced_` (or the failure). Requires mu_.
  void ProduceLocked(Clock::time_point now);
  void ReleaseThroughLocked(std::int64_t index);

  const ExecutionIds ids_;
  const bool reattachable_;
  const ExecutionShape shape_;

  mutable std::mutex mu_;
  std::condition_variable changed_;
  State state_ = State::kRunning;
  grpc::Status failure_;
  std::deque<spark::connect::ExecutePlanResponse> buffer_;  // indexes first_buffered_ ..
  std::int64_t first_buffered_ = 0;
  std::int64_t produced_ = 0;
  std::int64_t rows_produced_ = 0;
  std::unordered_map<std::string, std::int64_t> response_index_;
  Clock::time_point next_produce_at_;
  std::uint64_t attachment_ = 0;
};

}  // namespace sparktrace::sim
