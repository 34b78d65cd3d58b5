#include "sim/execution.h"

#include <algorithm>
#include <utility>

#include "sim/ids.h"

namespace sparktrace::sim {
namespace {

// Spark reports its own errors as INTERNAL with "[ERROR_CLASS] message"; clients match on the
// error class in the message (e.g. PySpark retries INVALID_CURSOR.DISCONNECTED).
grpc::Status SparkError(const std::string& error_class, const std::string& message) {
  return grpc::Status(grpc::StatusCode::INTERNAL, "[" + error_class + "] " + message);
}

void AppendVarint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

// google.rpc.Status{code = 1, message = 2}, hand-encoded: it is two fields, and the generated
// google/rpc protos are not part of our build. Sent as grpc-status-details-bin.
std::string EncodeRpcStatus(int code, const std::string& message) {
  std::string out;
  out.push_back(0x08);
  AppendVarint(out, static_cast<std::uint32_t>(code));
  out.push_back(0x12);
  AppendVarint(out, message.size());
  out += message;
  return out;
}

// What a Spark 4 server reports at step `step` of `steps`: a scan stage of `tasks` tasks, then a
// reduce stage of a quarter as many, the work done evenly over the steps; the reduce stage is
// listed once it has started, as Spark lists a stage once it is submitted. Every stage so far is
// in each response, as Spark's ConnectProgressExecutionListener sends them.
void SetProgress(std::int64_t step, std::int64_t steps, std::int64_t tasks,
                 spark::connect::ExecutePlanResponse::ExecutionProgress& progress) {
  constexpr std::int64_t kBytesPerScanTask = std::int64_t{8} << 20;
  const std::int64_t scan_tasks = std::max<std::int64_t>(tasks, 1);
  const std::int64_t reduce_tasks = std::max<std::int64_t>(scan_tasks / 4, 1);
  const std::int64_t done = (scan_tasks + reduce_tasks) * step / steps;
  const std::int64_t scan_done = std::min(done, scan_tasks);
  auto* scan = progress.add_stages();
  scan->set_stage_id(0);
  scan->set_num_tasks(scan_tasks);
  scan->set_num_completed_tasks(scan_done);
  scan->set_input_bytes_read(scan_done * kBytesPerScanTask);
  scan->set_done(scan_done == scan_tasks);
  // Tasks not done in the stage that runs now.
  std::int64_t remaining = scan_tasks - scan_done;
  if (scan_done == scan_tasks) {
    remaining = reduce_tasks - (done - scan_tasks);
    auto* reduce = progress.add_stages();
    reduce->set_stage_id(1);
    reduce->set_num_tasks(reduce_tasks);
    reduce->set_num_completed_tasks(done - scan_tasks);
    reduce->set_done(done - scan_tasks == reduce_tasks);
  }
  // Tasks in flight: as many as a small cluster's slots, while any remain.
  constexpr std::int64_t kSlots = 4;
  progress.set_num_inflight_tasks(std::min(remaining, kSlots));
}

}  // namespace

Execution::Execution(ExecutionIds ids, bool reattachable, ExecutionShape shape)
    : ids_(std::move(ids)), reattachable_(reattachable), shape_(shape), next_produce_at_(Clock::now()) {}

std::int64_t Execution::total_responses() const {
  return shape_.progress_steps + shape_.batches + (reattachable_ ? 1 : 0);
}

std::uint64_t Execution::Attach() {
  std::lock_guard lock(mu_);
  ++attachment_;
  changed_.notify_all();
  return attachment_;
}

grpc::Status Execution::IndexAfter(const std::string& last_response_id, std::int64_t* index) const {
  std::lock_guard lock(mu_);
  const auto found = response_index_.find(last_response_id);
  if (found == response_index_.end()) {
    return SparkError("INVALID_CURSOR.POSITION_NOT_FOUND",
                      "The cursor is invalid. The position " + last_response_id + " is not found.");
  }
  *index = found->second + 1;
  if (*index < first_buffered_) {
    return SparkError("INVALID_CURSOR.POSITION_NOT_AVAILABLE",
                      "The cursor is invalid. The position " + last_response_id +
                          " is not available: later responses were already released.");
  }
  return grpc::Status::OK;
}

Execution::Step Execution::Next(std::uint64_t attachment, std::int64_t index, Clock::time_point cut_deadline,
                                const std::function<bool()>& client_gone) {
  // Waiting wakes at least this often to notice a client that went away: the sync gRPC API has
  // no cancellation callback to notify the condition variable.
  constexpr auto kPollClient = std::chrono::milliseconds(50);
  std::unique_lock lock(mu_);
  while (true) {
    Step step;
    if (attachment != attachment_) {
      step.kind = Step::Kind::kError;
      step.status = SparkError(
          "INVALID_CURSOR.DISCONNECTED",
          "The cursor is invalid. Another stream reattached to operation " + ids_.operation_id + ".");
      return step;
    }
    if (state_ == State::kCancelled) {
      step.kind = Step::Kind::kError;
      step.status =
          SparkError("OPERATION_CANCELED", "Operation " + ids_.operation_id + " has been cancelled.");
      return step;
    }
    if (index < produced_) {
      if (index < first_buffered_) {
        step.kind = Step::Kind::kError;
        step.status =
            SparkError("INVALID_CURSOR.POSITION_NOT_AVAILABLE",
                       "The cursor is invalid. Response " + std::to_string(index) + " was already released.");
        return step;
      }
      step.kind = Step::Kind::kResponse;
      step.response = buffer_[static_cast<std::size_t>(index - first_buffered_)];
      return step;
    }
    if (state_ == State::kFailed) {
      step.kind = Step::Kind::kError;
      step.status = failure_;
      return step;
    }
    if (index >= total_responses()) {
      step.kind = Step::Kind::kEnd;
      return step;
    }
    const auto now = Clock::now();
    if (now >= next_produce_at_) {
      ProduceLocked(now);
      continue;
    }
    if (now >= cut_deadline) {
      step.kind = Step::Kind::kCut;
      return step;
    }
    changed_.wait_until(lock, std::min({next_produce_at_, cut_deadline, now + kPollClient}));
    if (client_gone()) {
      step.kind = Step::Kind::kError;
      step.status = grpc::Status(grpc::StatusCode::CANCELLED, "client cancelled the call");
      return step;
    }
  }
}

void Execution::ProduceLocked(Clock::time_point now) {
  const std::int64_t index = produced_;
  if (shape_.fail_code && index == shape_.fail_after) {
    state_ = State::kFailed;
    const int code = static_cast<int>(*shape_.fail_code);
    const std::string message = "sparktrace-sim: failure requested by x-sim-fail=" + std::to_string(code) +
                                " after " + std::to_string(index) + " response(s)";
    failure_ = grpc::Status(*shape_.fail_code, message, EncodeRpcStatus(code, message));
    changed_.notify_all();
    return;
  }
  spark::connect::ExecutePlanResponse response;
  response.set_session_id(ids_.session_id);
  response.set_server_side_session_id(ids_.server_side_session_id);
  response.set_operation_id(ids_.operation_id);
  response.set_response_id(NewUuid());
  if (index < shape_.progress_steps) {
    SetProgress(index + 1, shape_.progress_steps, shape_.progress_tasks,
                *response.mutable_execution_progress());
  } else if (index < shape_.progress_steps + shape_.batches) {
    const std::int64_t batch_index = index - shape_.progress_steps;
    auto* batch = response.mutable_arrow_batch();
    // Not Arrow IPC: a recognisable filler of the requested size. Rows: one per 16 bytes.
    const auto rows = static_cast<std::int64_t>(std::max<std::uint64_t>(1, shape_.batch_bytes / 16));
    batch->set_row_count(rows);
    batch->set_start_offset(rows_produced_);
    batch->set_data(std::string(shape_.batch_bytes, static_cast<char>('a' + batch_index % 26)));
    rows_produced_ += rows;
  } else {
    response.mutable_result_complete();
  }
  response_index_.emplace(response.response_id(), index);
  buffer_.push_back(std::move(response));
  ++produced_;
  next_produce_at_ = now + shape_.batch_interval;
  if (produced_ == total_responses()) state_ = State::kProduced;
  changed_.notify_all();
}

bool Execution::Interrupt() {
  std::lock_guard lock(mu_);
  if (state_ != State::kRunning) return false;
  state_ = State::kCancelled;
  changed_.notify_all();
  return true;
}

void Execution::ReleaseUntil(const std::string& response_id) {
  std::lock_guard lock(mu_);
  const auto found = response_index_.find(response_id);
  if (found != response_index_.end()) ReleaseThroughLocked(found->second);
}

void Execution::ReleaseThrough(std::int64_t index) {
  std::lock_guard lock(mu_);
  ReleaseThroughLocked(index);
}

void Execution::ReleaseThroughLocked(std::int64_t index) {
  while (!buffer_.empty() && first_buffered_ <= index) {
    buffer_.pop_front();
    ++first_buffered_;
  }
}

std::size_t Execution::buffered_responses() const {
  std::lock_guard lock(mu_);
  return buffer_.size();
}

}  // namespace sparktrace::sim
