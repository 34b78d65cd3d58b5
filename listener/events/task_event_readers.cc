// Readers of SparkListenerTaskStart / SparkListenerTaskEnd: the bulk of every event log, so these
// read exactly the fields the stage statistics, the per-application metrics and the SQL operator
// metrics need (of the executor metric gauges only the heap peak; of the accumulables the
// non-internal ones, the SQL metrics, and the peak execution memory) and skip the rest (updated
// blocks, stack traces) undecoded.
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "listener/events/event_readers.h"

namespace sparktrace::listener::events::json {
namespace {

// Accumulable names as their raw JSON tokens (quotes included), compared without unescaping: Spark
// writes these names plain.
constexpr std::string_view kInternalPrefixToken = "\"internal.";
constexpr std::string_view kPeakExecutionMemoryToken = "\"internal.metrics.peakExecutionMemory\"";
constexpr std::size_t kAccumulableUpdatesReserved = 32;

// "Task Info", shared by TaskStart and TaskEnd.
struct TaskInfoFields {
  std::int64_t task_id = 0;
  std::int32_t index = 0;
  std::int32_t attempt = 0;
  std::string executor_id;
  EpochMillis launch_time_ms = 0;
  EpochMillis finish_time_ms = 0;
  bool speculative = false;
  bool failed = false;
  bool killed = false;
  bool has_task_id = false;
  bool has_launch_time = false;
  bool keep_sql_updates = true;  // EventParserOptions::sql_metrics
  // "internal.metrics.peakExecutionMemory"'s update: logs before Spark 3.0 carry the task's peak
  // execution memory only there.
  std::optional<std::int64_t> peak_execution_memory_update;
  std::vector<AccumulableUpdate> accumulable_updates;
};

// An accumulable's "Update" from its raw token: a JSON integer (internal metrics) or a string of one
// (SQL metrics: Spark writes external accumulators' values with toString). Read without decoding
// the string (such digits need no unescaping); anything else is no integer update.
std::optional<std::int64_t> AccumulableUpdateFromToken(std::string_view token) {
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r')) {
    token.remove_suffix(1);
  }
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"')
    token = token.substr(1, token.size() - 2);
  // Most updates are a few digits (a Photon task end carries over a hundred): summed here, without
  // the library call; longer or signed ones go to std::from_chars.
  constexpr std::size_t kDigitsWithoutOverflow = 18;
  if (!token.empty() && token.size() <= kDigitsWithoutOverflow) {
    std::int64_t number = 0;
    bool all_digits = true;
    for (const char digit : token) {
      if (digit < '0' || digit > '9') {
        all_digits = false;  // never multiplied in: no overflow from what is not a digit
        break;
      }
      number = number * 10 + (digit - '0');
    }
    if (all_digits) return number;
  }
  std::int64_t number = 0;
  const auto [end, parse_error] = std::from_chars(token.data(), token.data() + token.size(), number);
  if (parse_error != std::errc() || end != token.data() + token.size() || token.empty()) return std::nullopt;
  return number;
}

// "Accumulables": [{"ID", "Name", "Update", "Value", "Internal", "Count Failed Values", "Metadata"}].
// Most entries of a plain log are internal task metrics (repeated in "Task Metrics"): each is left
// as soon as its name says so, the rest of the object skipped undecoded. SQL metrics say
// "Internal": true too, so the name decides. Of the others only "ID" and "Update" are read, and the
// object is left once both are (Spark writes them first). Entries without an integer "Update" are
// not kept. This is the bulk of a SQL log's bytes (a Photon task carries over a hundred metrics), so
// the values are read from their raw tokens.
error_code ReadAccumulables(ondemand::value& value, TaskInfoFields& out) {
  ondemand::array array;
  if (error_code error = value.get_array().get(array)) return error;
  for (auto element_result : array) {
    // An entry of another shape (not an object, a non-integer "ID") is not kept, and the task is
    // read all the same; the line's structure is still checked as a whole.
    ondemand::object object;
    if (element_result.get_object().get(object) != simdjson::SUCCESS) continue;
    std::int64_t id = 0;
    bool has_id = false;
    bool has_name = false;
    bool is_peak = false;
    std::optional<std::int64_t> update;
    for (auto field_result : object) {
      ondemand::field field;
      if (error_code error = std::move(field_result).get(field)) return error;
      const ondemand::raw_json_string key = field.key();
      if (key == "ID") {
        has_id = field.value().get_int64().get(id) == simdjson::SUCCESS;
      } else if (key == "Name") {
        const std::string_view token = field.value().raw_json_token();
        has_name = true;
        if (token.starts_with(kInternalPrefixToken)) {
          is_peak = token.starts_with(kPeakExecutionMemoryToken);
          if (!is_peak) break;  // the array iterator skips the rest of this object
        } else if (!out.keep_sql_updates) {
          break;
        }
      } else if (key == "Update") {
        update = AccumulableUpdateFromToken(field.value().raw_json_token());
      }
      if (has_name && update && (has_id || is_peak)) break;  // "Value", "Internal", ... are not needed
    }
    if (!update) continue;
    if (is_peak) {
      out.peak_execution_memory_update = update;
    } else if (has_id) {
      // A SQL task carries tens of metrics: one allocation up front, not one per doubling.
      if (out.accumulable_updates.empty()) out.accumulable_updates.reserve(kAccumulableUpdatesReserved);
      out.accumulable_updates.push_back(AccumulableUpdate{id, *update});
    }
  }
  return simdjson::SUCCESS;
}

// A task start's "Task Info" ends with what only its end fills in ("Getting Result Time",
// "Finish Time", "Failed", "Killed", an empty "Accumulables"): a start's visit stops at
// "Speculative" once the six fields it keeps are read.
error_code ReadTaskInfo(ondemand::value& value, ReadFailure& failure, bool is_start, TaskInfoFields& out) {
  WantedKeys start_keys(6);
  if (error_code visit_error = VisitObjectUntil(
          value, failure, [&] { return is_start && start_keys.AllRead(); },
          [&](std::string_view key, ondemand::value& field) -> error_code {
            if (key == "Task ID") {
              out.has_task_id = true;
              start_keys.Read(0);
              return ReadInt64(field, out.task_id);
            }
            if (key == "Index") {
              start_keys.Read(1);
              return ReadInt32(field, out.index);
            }
            if (key == "Attempt") {
              start_keys.Read(2);
              return ReadInt32(field, out.attempt);
            }
            if (key == "Launch Time") {
              out.has_launch_time = true;
              start_keys.Read(3);
              return ReadInt64(field, out.launch_time_ms);
            }
            if (key == "Executor ID") {
              start_keys.Read(4);
              return ReadString(field, out.executor_id);
            }
            if (key == "Speculative") {
              start_keys.Read(5);
              return ReadBool(field, out.speculative);
            }
            if (key == "Finish Time") return ReadInt64(field, out.finish_time_ms);
            if (key == "Failed") return ReadBool(field, out.failed);
            if (key == "Killed") return ReadBool(field, out.killed);
            if (key == "Accumulables") return ReadAccumulables(field, out);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!out.has_task_id) return Missing(failure, "Task ID");
  if (!out.has_launch_time) return Missing(failure, "Launch Time");
  return simdjson::SUCCESS;
}

error_code ReadShuffleReadMetrics(ondemand::value& value, ReadFailure& failure, TaskMetrics& out) {
  WantedKeys wanted(4);  // "Remote Requests Duration" and "Push Based Shuffle" (3.2+) follow them
  return VisitObjectUntil(
      value, failure, [&] { return wanted.AllRead(); },
      [&](std::string_view key, ondemand::value& field) -> error_code {
        if (key == "Remote Bytes Read") {
          wanted.Read(0);
          return ReadInt64(field, out.shuffle_remote_bytes_read);
        }
        if (key == "Local Bytes Read") {
          wanted.Read(1);
          return ReadInt64(field, out.shuffle_local_bytes_read);
        }
        if (key == "Fetch Wait Time") {
          wanted.Read(2);
          return ReadInt64(field, out.shuffle_fetch_wait_time_ms);
        }
        if (key == "Total Records Read") {
          wanted.Read(3);
          return ReadInt64(field, out.shuffle_records_read);
        }
        return simdjson::SUCCESS;
      });
}

error_code ReadShuffleWriteMetrics(ondemand::value& value, ReadFailure& failure, TaskMetrics& out) {
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
    if (key == "Shuffle Bytes Written") return ReadInt64(field, out.shuffle_bytes_written);
    if (key == "Shuffle Write Time") return ReadInt64(field, out.shuffle_write_time_ns);
    if (key == "Shuffle Records Written") return ReadInt64(field, out.shuffle_records_written);
    return simdjson::SUCCESS;
  });
}

error_code ReadInputMetrics(ondemand::value& value, ReadFailure& failure, TaskMetrics& out) {
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
    if (key == "Bytes Read") return ReadInt64(field, out.input_bytes_read);
    if (key == "Records Read") return ReadInt64(field, out.input_records_read);
    return simdjson::SUCCESS;  // 1.x "Data Read Method"
  });
}

error_code ReadOutputMetrics(ondemand::value& value, ReadFailure& failure, TaskMetrics& out) {
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
    if (key == "Bytes Written") return ReadInt64(field, out.output_bytes_written);
    if (key == "Records Written") return ReadInt64(field, out.output_records_written);
    return simdjson::SUCCESS;
  });
}

error_code ReadTaskMetrics(ondemand::value& value, ReadFailure& failure, TaskMetrics& out) {
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
    if (key == "Executor Run Time") return ReadInt64(field, out.executor_run_time_ms);
    if (key == "Executor CPU Time") return ReadOptionalInt64(field, out.executor_cpu_time_ns);
    if (key == "JVM GC Time") return ReadInt64(field, out.jvm_gc_time_ms);
    if (key == "Executor Deserialize Time") return ReadInt64(field, out.executor_deserialize_time_ms);
    if (key == "Result Serialization Time") return ReadInt64(field, out.result_serialization_time_ms);
    if (key == "Result Size") return ReadInt64(field, out.result_size_bytes);
    if (key == "Memory Bytes Spilled") return ReadInt64(field, out.memory_bytes_spilled);
    if (key == "Disk Bytes Spilled") return ReadInt64(field, out.disk_bytes_spilled);
    if (key == "Peak Execution Memory") return ReadOptionalInt64(field, out.peak_execution_memory_bytes);
    if (key == "Shuffle Read Metrics") return ReadShuffleReadMetrics(field, failure, out);
    if (key == "Shuffle Write Metrics") return ReadShuffleWriteMetrics(field, failure, out);
    if (key == "Input Metrics") return ReadInputMetrics(field, failure, out);
    if (key == "Output Metrics") return ReadOutputMetrics(field, failure, out);
    return simdjson::SUCCESS;  // "Updated Blocks", "Executor Deserialize CPU Time", 4.0 peaks, ...
  });
}

// "Task Executor Metrics": the executor's peak gauges while the task ran; only the heap is read,
// and Spark writes it first of some twenty-five.
error_code ReadTaskExecutorMetrics(ondemand::value& value, ReadFailure& failure, TaskEnd& out) {
  WantedKeys wanted(1);
  return VisitObjectUntil(
      value, failure, [&] { return wanted.AllRead(); },
      [&](std::string_view key, ondemand::value& field) -> error_code {
        if (key == "JVMHeapMemory") {
          wanted.Read(0);
          return ReadOptionalInt64(field, out.executor_peak_jvm_heap_bytes);
        }
        return simdjson::SUCCESS;  // off-heap, storage, process tree and GC gauges
      });
}

TaskEndReason TaskEndReasonFromName(std::string_view name) {
  if (name == "Success") return TaskEndReason::kSuccess;
  if (name == "ExceptionFailure") return TaskEndReason::kExceptionFailure;
  if (name == "TaskKilled") return TaskEndReason::kTaskKilled;
  if (name == "Resubmitted") return TaskEndReason::kResubmitted;
  if (name == "FetchFailed") return TaskEndReason::kFetchFailed;
  if (name == "ExecutorLostFailure") return TaskEndReason::kExecutorLostFailure;
  if (name == "TaskResultLost") return TaskEndReason::kTaskResultLost;
  if (name == "TaskCommitDenied") return TaskEndReason::kTaskCommitDenied;
  if (name == "UnknownReason") return TaskEndReason::kUnknownReason;
  return TaskEndReason::kOther;
}

// "Task End Reason": {"Reason": ..., plus reason-specific fields}. The views point into the
// parser's string buffer, valid for the rest of this line; only the chosen text is copied.
error_code ReadTaskEndReason(ondemand::value& value, ReadFailure& failure, TaskEnd& out) {
  std::string_view reason_name;
  bool has_reason = false;
  std::string_view class_name, description, kill_reason, loss_reason, message;
  if (error_code visit_error =
          VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
            if (key == "Reason") {
              has_reason = true;
              return field.get_string().get(reason_name);
            }
            if (key == "Class Name") return field.get_string().get(class_name);
            if (key == "Description") return field.get_string().get(description);
            if (key == "Kill Reason") return field.get_string().get(kill_reason);
            if (key == "Loss Reason") return field.get_string().get(loss_reason);
            if (key == "Message") return field.get_string().get(message);
            return simdjson::SUCCESS;  // "Stack Trace", "Full Stack Trace", "Accumulator Updates", ...
          })) {
    return visit_error;
  }
  if (!has_reason) return Missing(failure, "Reason");
  out.reason = TaskEndReasonFromName(reason_name);
  std::string detail;
  switch (out.reason) {
    case TaskEndReason::kExceptionFailure:
      detail.assign(class_name);
      if (!description.empty()) {
        if (!detail.empty()) detail += ": ";
        detail += Utf8Prefix(description, kMaxMessageBytes);
      }
      break;
    case TaskEndReason::kTaskKilled:
      detail.assign(kill_reason);
      break;
    case TaskEndReason::kExecutorLostFailure:
      detail.assign(loss_reason);
      break;
    case TaskEndReason::kFetchFailed:
      detail.assign(message);
      break;
    case TaskEndReason::kOther:
      detail.assign(reason_name);  // the only trace of a reason this model does not know
      break;
    default:
      break;
  }
  out.reason_detail.assign(Utf8Prefix(detail, kMaxMessageBytes));
  return simdjson::SUCCESS;
}

}  // namespace

error_code ReadTaskStart(FieldRange fields, ReadFailure& failure, TaskStart& out) {
  bool has_stage_id = false;
  bool has_task_info = false;
  TaskInfoFields info;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Stage ID") {
              has_stage_id = true;
              return ReadInt32(value, out.stage_id);
            }
            if (key == "Stage Attempt ID") return ReadInt32(value, out.stage_attempt_id);
            if (key == "Task Info") {
              has_task_info = true;
              return ReadTaskInfo(value, failure, /*is_start=*/true, info);
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_stage_id) return Missing(failure, "Stage ID");
  if (!has_task_info) return Missing(failure, "Task Info");
  out.task_id = info.task_id;
  out.index = info.index;
  out.attempt = info.attempt;
  out.executor_id = std::move(info.executor_id);
  out.launch_time_ms = info.launch_time_ms;
  out.speculative = info.speculative;
  return simdjson::SUCCESS;
}

error_code ReadTaskEnd(FieldRange fields, ReadFailure& failure, bool sql_metrics, TaskEnd& out) {
  bool has_stage_id = false;
  bool has_reason = false;
  bool has_task_info = false;
  TaskInfoFields info;
  info.keep_sql_updates = sql_metrics;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Stage ID") {
              has_stage_id = true;
              return ReadInt32(value, out.stage_id);
            }
            if (key == "Stage Attempt ID") return ReadInt32(value, out.stage_attempt_id);
            if (key == "Task End Reason") {
              has_reason = true;
              return ReadTaskEndReason(value, failure, out);
            }
            if (key == "Task Info") {
              has_task_info = true;
              return ReadTaskInfo(value, failure, /*is_start=*/false, info);
            }
            if (key == "Task Metrics") {
              bool is_null = false;
              if (error_code error = ConsumeNull(value, is_null)) return error;
              if (is_null) return simdjson::SUCCESS;
              out.has_metrics = true;
              return ReadTaskMetrics(value, failure, out.metrics);
            }
            if (key == "Task Executor Metrics") {
              bool is_null = false;
              if (error_code error = ConsumeNull(value, is_null)) return error;
              if (is_null) return simdjson::SUCCESS;
              return ReadTaskExecutorMetrics(value, failure, out);
            }
            return simdjson::SUCCESS;  // "Task Type"
          })) {
    return visit_error;
  }
  if (!has_stage_id) return Missing(failure, "Stage ID");
  if (!has_reason) return Missing(failure, "Task End Reason");
  if (!has_task_info) return Missing(failure, "Task Info");
  out.task_id = info.task_id;
  out.index = info.index;
  out.attempt = info.attempt;
  out.executor_id = std::move(info.executor_id);
  out.launch_time_ms = info.launch_time_ms;
  out.finish_time_ms = info.finish_time_ms;
  out.speculative = info.speculative;
  out.failed = info.failed;
  out.killed = info.killed;
  out.accumulable_updates = std::move(info.accumulable_updates);
  if (out.has_metrics && !out.metrics.peak_execution_memory_bytes && info.peak_execution_memory_update) {
    out.metrics.peak_execution_memory_bytes = info.peak_execution_memory_update;
  }
  return simdjson::SUCCESS;
}

}  // namespace sparktrace::listener::events::json
