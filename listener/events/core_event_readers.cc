// Readers of the core scheduler events (hand-written JSON with Title-Case keys, JsonProtocol.scala).
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "listener/events/connect_job_tag.h"
#include "listener/events/event_readers.h"

namespace sparktrace::listener::events::json {
namespace {

// Property values are strings; an id that does not parse is treated as absent rather than
// failing the whole JobStart over one property.
std::optional<std::int64_t> ParseDecimal(std::string_view text) {
  std::int64_t number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return number;
}

// "Properties": a string map. Only the keys correlation needs are read; the values of all other
// keys (configuration, descriptions, call sites) are skipped undecoded and never copied.
error_code ReadJobProperties(ondemand::value& value, ReadFailure& failure, JobProperties& out) {
  bool is_null = false;
  if (error_code error = ConsumeNull(value, is_null)) return error;
  if (is_null) return simdjson::SUCCESS;
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& property) -> error_code {
    if (!key.starts_with("spark.")) return simdjson::SUCCESS;
    std::string_view text;
    if (key == "spark.job.tags") {
      if (error_code error = property.get_string().get(text)) return error;
      out.job_tags.clear();
      for (std::string_view tag : SplitJobTags(text)) out.job_tags.emplace_back(tag);
    } else if (key == "spark.sql.execution.id") {
      if (error_code error = property.get_string().get(text)) return error;
      out.sql_execution_id = ParseDecimal(text);
    } else if (key == "spark.sql.execution.root.id") {
      if (error_code error = property.get_string().get(text)) return error;
      out.sql_root_execution_id = ParseDecimal(text);
    } else if (key == "spark.jobGroup.id") {
      return ReadOptionalString(property, out.job_group_id);
    }
    return simdjson::SUCCESS;
  });
}

error_code ReadIntArray(ondemand::value& value, std::vector<std::int32_t>& out) {
  return VisitArray(value, [&](ondemand::value& element) -> error_code {
    std::int32_t number = 0;
    if (error_code error = ReadInt32(element, number)) return error;
    out.push_back(number);
    return simdjson::SUCCESS;
  });
}

// "Job Result": {"Result": "JobSucceeded"|"JobFailed", "Exception": {"Message": ...}}.
error_code ReadJobResult(ondemand::value& value, ReadFailure& failure, JobEnd& out) {
  bool has_result = false;
  if (error_code visit_error =
          VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
            if (key == "Result") {
              std::string_view result;
              if (error_code error = field.get_string().get(result)) return error;
              has_result = true;
              out.result = result == "JobSucceeded" ? JobResult::kSucceeded
                           : result == "JobFailed"  ? JobResult::kFailed
                                                    : JobResult::kOther;
            } else if (key == "Exception") {
              return VisitObject(field, failure,
                                 [&](std::string_view exception_key, ondemand::value& item) -> error_code {
                                   if (exception_key == "Message")
                                     return ReadMessage(item, out.failure_message);
                                   return simdjson::SUCCESS;
                                 });
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_result) return Missing(failure, "Result");
  return simdjson::SUCCESS;
}

error_code ReadStageInfo(ondemand::value& value, ReadFailure& failure, StageInfo& out) {
  bool has_stage_id = false;
  if (error_code visit_error =
          VisitObject(value, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
            if (key == "Stage ID") {
              has_stage_id = true;
              return ReadInt32(field, out.stage_id);
            }
            if (key == "Stage Attempt ID") return ReadInt32(field, out.attempt_id);
            if (key == "Number of Tasks") return ReadInt32(field, out.num_tasks);
            if (key == "Stage Name") {
              std::string_view name;
              if (error_code error = field.get_string().get(name)) return error;
              // Spark Connect names a stage after its plan ("Spark Connect - command { ... }"): the
              // plan can carry table names and literals, so only the part before it is kept.
              name = name.substr(0, name.find('{'));
              while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
              out.name.assign(Utf8Prefix(name, kMaxStageNameBytes));
              return simdjson::SUCCESS;
            }
            if (key == "Submission Time") return ReadOptionalInt64(field, out.submission_time_ms);
            if (key == "Completion Time") return ReadOptionalInt64(field, out.completion_time_ms);
            if (key == "Failure Reason") return ReadOptionalMessage(field, out.failure_reason);
            if (key == "Parent IDs") {
              out.parent_ids.emplace();
              return ReadIntArray(field, *out.parent_ids);
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_stage_id) return Missing(failure, "Stage ID");
  return simdjson::SUCCESS;
}

}  // namespace

error_code ReadLogStart(FieldRange fields, ReadFailure& failure, LogStart& out) {
  bool has_version = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key != "Spark Version") return simdjson::SUCCESS;
            has_version = true;
            return ReadString(value, out.spark_version);
          })) {
    return visit_error;
  }
  if (!has_version) return Missing(failure, "Spark Version");
  return simdjson::SUCCESS;
}

error_code ReadApplicationStart(FieldRange fields, ReadFailure& failure, ApplicationStart& out) {
  bool has_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Timestamp") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "App Name") return ReadString(value, out.app_name);
            if (key == "App ID") return ReadString(value, out.app_id);
            if (key == "App Attempt ID") return ReadOptionalString(value, out.attempt_id);
            if (key == "User") return ReadString(value, out.spark_user);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_time) return Missing(failure, "Timestamp");
  return simdjson::SUCCESS;
}

error_code ReadApplicationEnd(FieldRange fields, ReadFailure& failure, ApplicationEnd& out) {
  bool has_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Timestamp") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "ExitCode") {
              std::int32_t exit_code = 0;
              if (error_code error = ReadInt32(value, exit_code)) return error;
              out.exit_code = exit_code;
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_time) return Missing(failure, "Timestamp");
  return simdjson::SUCCESS;
}

error_code ReadExecutorAdded(FieldRange fields, ReadFailure& failure, ExecutorAdded& out) {
  bool has_time = false;
  bool has_executor_id = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Timestamp") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "Executor ID") {
              has_executor_id = true;
              return ReadString(value, out.executor_id);
            }
            if (key != "Executor Info") return simdjson::SUCCESS;
            // Log Urls, Attributes and Resources are skipped: URLs can carry tokens.
            return VisitObject(value, failure,
                               [&](std::string_view info_key, ondemand::value& info) -> error_code {
                                 if (info_key == "Host") return ReadString(info, out.host);
                                 if (info_key == "Total Cores") return ReadInt32(info, out.total_cores);
                                 if (info_key == "Request Time")
                                   return ReadOptionalInt64(info, out.request_time_ms);
                                 return simdjson::SUCCESS;
                               });
          })) {
    return visit_error;
  }
  if (!has_time) return Missing(failure, "Timestamp");
  if (!has_executor_id) return Missing(failure, "Executor ID");
  return simdjson::SUCCESS;
}

error_code ReadExecutorRemoved(FieldRange fields, ReadFailure& failure, ExecutorRemoved& out) {
  bool has_time = false;
  bool has_executor_id = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Timestamp") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "Executor ID") {
              has_executor_id = true;
              return ReadString(value, out.executor_id);
            }
            if (key == "Removed Reason") return ReadMessage(value, out.reason);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_time) return Missing(failure, "Timestamp");
  if (!has_executor_id) return Missing(failure, "Executor ID");
  return simdjson::SUCCESS;
}

namespace {

// "Stage Infos": of each, only the stage id and its task count (the rest, RDD infos included, is
// what StageSubmitted says again).
error_code ReadJobStageTasks(ondemand::value& value, ReadFailure& failure, std::vector<JobStageTasks>& out) {
  return VisitArray(value, [&](ondemand::value& element) -> error_code {
    JobStageTasks stage;
    bool has_stage_id = false;
    if (error_code error =
            VisitObject(element, failure, [&](std::string_view key, ondemand::value& field) -> error_code {
              if (key == "Stage ID") {
                has_stage_id = true;
                return ReadInt32(field, stage.stage_id);
              }
              if (key == "Number of Tasks") return ReadInt32(field, stage.num_tasks);
              return simdjson::SUCCESS;
            })) {
      return error;
    }
    if (has_stage_id) out.push_back(stage);
    return simdjson::SUCCESS;
  });
}

}  // namespace

error_code ReadJobStart(FieldRange fields, ReadFailure& failure, JobStart& out) {
  bool has_job_id = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Job ID") {
              has_job_id = true;
              return ReadInt32(value, out.job_id);
            }
            if (key == "Submission Time") return ReadOptionalInt64(value, out.submission_time_ms);
            if (key == "Stage IDs") return ReadIntArray(value, out.stage_ids);
            if (key == "Properties") return ReadJobProperties(value, failure, out.properties);
            if (key == "Stage Infos") return ReadJobStageTasks(value, failure, out.stage_tasks);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_job_id) return Missing(failure, "Job ID");
  return simdjson::SUCCESS;
}

error_code ReadJobEnd(FieldRange fields, ReadFailure& failure, JobEnd& out) {
  bool has_job_id = false;
  bool has_result = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "Job ID") {
              has_job_id = true;
              return ReadInt32(value, out.job_id);
            }
            if (key == "Completion Time") return ReadOptionalInt64(value, out.completion_time_ms);
            if (key == "Job Result") {
              has_result = true;
              return ReadJobResult(value, failure, out);
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_job_id) return Missing(failure, "Job ID");
  if (!has_result) return Missing(failure, "Job Result");
  return simdjson::SUCCESS;
}

error_code ReadStageEvent(FieldRange fields, ReadFailure& failure, StageInfo& out) {
  bool has_stage_info = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key != "Stage Info") return simdjson::SUCCESS;  // "Properties" repeat the job's
            has_stage_info = true;
            return ReadStageInfo(value, failure, out);
          })) {
    return visit_error;
  }
  if (!has_stage_info) return Missing(failure, "Stage Info");
  return simdjson::SUCCESS;
}

}  // namespace sparktrace::listener::events::json
