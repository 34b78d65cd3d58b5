#include "listener/rest/rest_json.h"

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "common/utf8.h"
#include "listener/rest/rest_date.h"

namespace sparktrace::listener::rest {
namespace {

namespace dom = simdjson::dom;
using simdjson::error_code;

// A failed read: which field, and why. Turned into an Error by the caller, who knows the endpoint.
struct FieldError {
  std::string field;
  std::string why;
};

// Field accessors. "Absent" and JSON null are the same for every optional field Spark writes.
class ObjectReader {
 public:
  explicit ObjectReader(dom::object object) : object_(object) {}

  std::optional<dom::element> Find(std::string_view key) const {
    dom::element value;
    if (object_.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
    return value;
  }

  // Integers: a present field of another type (or out of range) is an error, not a default.
  template <typename Int>
  bool OptionalInt(std::string_view key, std::optional<Int>& out) {
    auto value = Find(key);
    if (!value) return true;
    std::int64_t number = 0;
    if (value->get_int64().get(number) != simdjson::SUCCESS || number < std::numeric_limits<Int>::min() ||
        number > std::numeric_limits<Int>::max()) {
      return Fail(key, "not an integer in range");
    }
    out = static_cast<Int>(number);
    return true;
  }

  template <typename Int>
  bool RequiredInt(std::string_view key, Int& out) {
    std::optional<Int> value;
    if (!OptionalInt(key, value)) return false;
    if (!value) return Fail(key, "missing");
    out = *value;
    return true;
  }

  // A counter or metric: absent means 0 (older Sparks omit newer metrics).
  template <typename Int>
  bool Counter(std::string_view key, Int& out) {
    std::optional<Int> value;
    if (!OptionalInt(key, value)) return false;
    out = value.value_or(0);
    return true;
  }

  bool OptionalString(std::string_view key, std::optional<std::string_view>& out) {
    auto value = Find(key);
    if (!value) return true;
    std::string_view text;
    if (value->get_string().get(text) != simdjson::SUCCESS) return Fail(key, "not a string");
    out = text;
    return true;
  }

  bool String(std::string_view key, std::string& out) {
    std::optional<std::string_view> text;
    if (!OptionalString(key, text)) return false;
    out.assign(text.value_or(std::string_view()));
    return true;
  }

  bool RequiredString(std::string_view key, std::string& out) {
    std::optional<std::string_view> text;
    if (!OptionalString(key, text)) return false;
    if (!text) return Fail(key, "missing");
    out.assign(*text);
    return true;
  }

  // A REST date string; a malformed one is an error (a wrong time would mislead more than none).
  bool Date(std::string_view key, std::optional<events::EpochMillis>& out) {
    std::optional<std::string_view> text;
    if (!OptionalString(key, text)) return false;
    if (!text) return true;
    out = ParseRestDate(*text);
    if (!out) return Fail(key, "not a date like 2015-02-03T16:42:59.720GMT");
    return true;
  }

  bool Bool(std::string_view key, bool& out) {
    auto value = Find(key);
    if (!value) return true;
    if (value->get_bool().get(out) != simdjson::SUCCESS) return Fail(key, "not a boolean");
    return true;
  }

  bool IntArray(std::string_view key, std::vector<std::int32_t>& out) {
    auto value = Find(key);
    if (!value) return true;
    dom::array array;
    if (value->get_array().get(array) != simdjson::SUCCESS) return Fail(key, "not an array");
    for (dom::element element : array) {
      std::int64_t number = 0;
      if (element.get_int64().get(number) != simdjson::SUCCESS || number < 0 ||
          number > std::numeric_limits<std::int32_t>::max()) {
        return Fail(key, "not an array of ids");
      }
      out.push_back(static_cast<std::int32_t>(number));
    }
    return true;
  }

  bool StringArray(std::string_view key, std::vector<std::string>& out) {
    auto value = Find(key);
    if (!value) return true;
    dom::array array;
    if (value->get_array().get(array) != simdjson::SUCCESS) return Fail(key, "not an array");
    for (dom::element element : array) {
      std::string_view text;
      if (element.get_string().get(text) != simdjson::SUCCESS) return Fail(key, "not an array of strings");
      out.emplace_back(text);
    }
    return true;
  }

  // A date that may be a placeholder: running attempts report endTime "1969-12-31T23:59:59.999GMT".
  bool LenientDate(std::string_view key, std::optional<events::EpochMillis>& out) {
    std::optional<std::string_view> text;
    if (!OptionalString(key, text)) return false;
    if (text) out = ParseRestDate(*text);
    return true;
  }

  // Takes over the error of a reader of a nested object, naming the field by its path.
  bool FailNested(std::string_view path, const ObjectReader& nested) {
    const FieldError inner = nested.error().value_or(FieldError{"?", "unreadable"});
    return Fail(std::string(path) + "." + inner.field, inner.why);
  }

  const std::optional<FieldError>& error() const { return error_; }

 private:
  bool Fail(std::string_view key, std::string_view why) {
    error_ = FieldError{std::string(key), std::string(why)};
    return false;
  }

  dom::object object_;
  std::optional<FieldError> error_;
};

RestJobStatus JobStatusFromName(std::string_view name) {
  if (name == "RUNNING") return RestJobStatus::kRunning;
  if (name == "SUCCEEDED") return RestJobStatus::kSucceeded;
  if (name == "FAILED") return RestJobStatus::kFailed;
  return RestJobStatus::kUnknown;
}

RestStageStatus StageStatusFromName(std::string_view name) {
  if (name == "ACTIVE") return RestStageStatus::kActive;
  if (name == "COMPLETE") return RestStageStatus::kComplete;
  if (name == "FAILED") return RestStageStatus::kFailed;
  if (name == "PENDING") return RestStageStatus::kPending;
  if (name == "SKIPPED") return RestStageStatus::kSkipped;
  return RestStageStatus::kUnknown;
}

bool ReadApplication(ObjectReader& app, RestApplication& out) {
  if (!app.RequiredString("id", out.id) || !app.String("name", out.name)) return false;
  auto attempts = app.Find("attempts");
  if (!attempts) return true;
  dom::array list;
  if (attempts->get_array().get(list) != simdjson::SUCCESS) return true;
  // Spark sorts attempts newest first; the newest is the one running (or last run).
  for (dom::element element : list) {
    dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) break;
    ObjectReader attempt(object);
    std::optional<std::string_view> attempt_id;
    std::optional<std::int64_t> start_epoch;
    std::optional<std::int64_t> end_epoch;
    if (!attempt.OptionalString("attemptId", attempt_id) || !attempt.Bool("completed", out.completed) ||
        !attempt.String("sparkUser", out.spark_user) ||
        !attempt.String("appSparkVersion", out.spark_version) ||
        !attempt.OptionalInt("startTimeEpoch", start_epoch) ||
        !attempt.OptionalInt("endTimeEpoch", end_epoch) ||
        !attempt.LenientDate("startTime", out.start_time_ms) ||
        !attempt.LenientDate("endTime", out.end_time_ms)) {
      return app.FailNested("attempts[0]", attempt);
    }
    if (attempt_id) out.attempt_id = std::string(*attempt_id);
    // The epoch fields are exact and present since 2.x; the date strings cover older servers.
    if (start_epoch && *start_epoch > 0) out.start_time_ms = *start_epoch;
    if (end_epoch && *end_epoch > 0) out.end_time_ms = *end_epoch;
    // A running attempt reports endTimeEpoch -1: it has no end yet.
    if (!out.completed) out.end_time_ms.reset();
    break;
  }
  return true;
}

bool ReadJob(ObjectReader& job, RestJob& out) {
  std::string status;
  std::optional<std::string_view> group;
  if (!job.RequiredInt("jobId", out.job_id) || !job.String("status", status) ||
      !job.Date("submissionTime", out.submission_time_ms) ||
      !job.Date("completionTime", out.completion_time_ms) || !job.IntArray("stageIds", out.stage_ids) ||
      !job.StringArray("jobTags", out.job_tags) || !job.OptionalString("jobGroup", group)) {
    return false;
  }
  out.status = JobStatusFromName(status);
  if (group) out.job_group_id = std::string(*group);
  return true;
}

bool ReadStage(ObjectReader& stage, RestStage& out) {
  std::string status;
  std::optional<std::string_view> failure;
  events::TaskMetrics& sum = out.task_metrics_sum;
  std::optional<std::int64_t> cpu_time;
  std::optional<std::int64_t> peak_memory;
  const bool ok =
      stage.RequiredInt("stageId", out.stage_id) && stage.RequiredInt("attemptId", out.attempt_id) &&
      stage.String("status", status) && stage.Counter("numTasks", out.num_tasks) &&
      stage.Counter("numCompleteTasks", out.num_complete_tasks) &&
      stage.Counter("numFailedTasks", out.num_failed_tasks) &&
      stage.Counter("numKilledTasks", out.num_killed_tasks) &&
      stage.Date("submissionTime", out.submission_time_ms) &&
      stage.Date("firstTaskLaunchedTime", out.first_task_launched_time_ms) &&
      stage.Date("completionTime", out.completion_time_ms) &&
      stage.OptionalString("failureReason", failure) &&
      stage.Counter("executorDeserializeTime", sum.executor_deserialize_time_ms) &&
      stage.Counter("executorRunTime", sum.executor_run_time_ms) &&
      stage.OptionalInt("executorCpuTime", cpu_time) && stage.Counter("jvmGcTime", sum.jvm_gc_time_ms) &&
      stage.Counter("resultSerializationTime", sum.result_serialization_time_ms) &&
      stage.Counter("resultSize", sum.result_size_bytes) &&
      stage.Counter("memoryBytesSpilled", sum.memory_bytes_spilled) &&
      stage.Counter("diskBytesSpilled", sum.disk_bytes_spilled) &&
      stage.OptionalInt("peakExecutionMemory", peak_memory) &&
      stage.Counter("shuffleRemoteBytesRead", sum.shuffle_remote_bytes_read) &&
      stage.Counter("shuffleLocalBytesRead", sum.shuffle_local_bytes_read) &&
      stage.Counter("shuffleFetchWaitTime", sum.shuffle_fetch_wait_time_ms) &&
      stage.Counter("shuffleReadRecords", sum.shuffle_records_read) &&
      stage.Counter("shuffleWriteBytes", sum.shuffle_bytes_written) &&
      stage.Counter("shuffleWriteTime", sum.shuffle_write_time_ns) &&
      stage.Counter("shuffleWriteRecords", sum.shuffle_records_written) &&
      stage.Counter("inputBytes", sum.input_bytes_read) &&
      stage.Counter("inputRecords", sum.input_records_read) &&
      stage.Counter("outputBytes", sum.output_bytes_written) &&
      stage.Counter("outputRecords", sum.output_records_written);
  if (!ok) return false;
  out.status = StageStatusFromName(status);
  if (failure) out.failure_reason = std::string(Utf8Prefix(*failure, events::kMaxMessageBytes));
  sum.executor_cpu_time_ns = cpu_time;
  sum.peak_execution_memory_bytes = peak_memory;
  return true;
}

bool ReadExecutor(ObjectReader& executor, RestExecutor& out) {
  std::string host_port;
  if (!executor.RequiredString("id", out.executor_id) || !executor.String("hostPort", host_port) ||
      !executor.Counter("totalCores", out.total_cores) || !executor.Bool("isActive", out.active) ||
      !executor.Date("addTime", out.add_time_ms) || !executor.Date("removeTime", out.remove_time_ms) ||
      !executor.String("removeReason", out.remove_reason)) {
    return false;
  }
  // "host:port", "[v6]:port", or a bare host; the port is the block manager's, not wanted.
  if (!host_port.empty() && host_port.front() == '[') {
    const std::size_t close = host_port.find(']');
    out.host = host_port.substr(1, close == std::string::npos ? std::string::npos : close - 1);
  } else {
    out.host = host_port.substr(0, host_port.rfind(':'));
  }
  out.remove_reason = std::string(Utf8Prefix(out.remove_reason, events::kMaxMessageBytes));
  return true;
}

}  // namespace

struct RestJsonReader::Impl {
  dom::parser parser;

  // Parses `body` as an array of objects and calls read(reader, item) for each.
  template <typename Item, typename ReadItem>
  Result<std::vector<Item>> ReadArray(std::string_view what, std::string_view body, ReadItem read) {
    dom::element root;
    if (error_code error = parser.parse(body.data(), body.size()).get(root)) {
      return InvalidArgument(std::string(what) + ": not JSON (" + simdjson::error_message(error) + ")");
    }
    dom::array array;
    if (root.get_array().get(array) != simdjson::SUCCESS) {
      return InvalidArgument(std::string(what) + ": expected a JSON array");
    }
    std::vector<Item> items;
    items.reserve(array.size());
    std::size_t index = 0;
    for (dom::element element : array) {
      dom::object object;
      if (element.get_object().get(object) != simdjson::SUCCESS) {
        return InvalidArgument(std::string(what) + "[" + std::to_string(index) + "]: not an object");
      }
      ObjectReader reader(object);
      Item item;
      if (!read(reader, item)) {
        const FieldError field = reader.error().value_or(FieldError{"?", "unreadable"});
        return InvalidArgument(std::string(what) + "[" + std::to_string(index) + "]." + field.field + ": " +
                               field.why);
      }
      items.push_back(std::move(item));
      ++index;
    }
    return items;
  }
};

RestJsonReader::RestJsonReader() : impl_(std::make_unique<Impl>()) {}
RestJsonReader::~RestJsonReader() = default;

Result<std::vector<RestApplication>> RestJsonReader::Applications(std::string_view body) {
  return impl_->ReadArray<RestApplication>("applications", body, ReadApplication);
}

Result<std::vector<RestJob>> RestJsonReader::Jobs(std::string_view body) {
  return impl_->ReadArray<RestJob>("jobs", body, ReadJob);
}

Result<std::vector<RestStage>> RestJsonReader::Stages(std::string_view body) {
  return impl_->ReadArray<RestStage>("stages", body, ReadStage);
}

Result<std::vector<RestExecutor>> RestJsonReader::Executors(std::string_view body) {
  return impl_->ReadArray<RestExecutor>("executors", body, ReadExecutor);
}

}  // namespace sparktrace::listener::rest
