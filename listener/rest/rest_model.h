#pragma once
// What the driver REST API (/api/v1, Spark's status/api/v1/api.scala) says about one application,
// reduced to the fields the REST feed turns into SparkEvents. Plain values, no JSON types; filled
// by rest_json.h, compared across polls by RestEventDiffer.
//
// Times are epoch milliseconds parsed from the REST date strings ("2015-02-03T16:43:05.829GMT");
// nullopt when the field is absent (e.g. jobs of Spark 1.2-era logs have no submissionTime).
// Text that can carry code or data (job/stage names, descriptions, call sites, details) is never
// copied, as in spark_event.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "listener/events/spark_event.h"

namespace sparktrace::listener::rest {

// /applications: one ApplicationInfo with its newest attempt (Spark lists attempts newest first).
struct RestApplication {
  std::string id;
  std::string name;
  std::optional<std::string> attempt_id;  // "attemptId": only in cluster mode with attempts
  std::optional<events::EpochMillis> start_time_ms;
  std::optional<events::EpochMillis> end_time_ms;  // set when completed
  bool completed = false;
  std::string spark_user;
  std::string spark_version;  // "appSparkVersion"; empty when unknown
};

// /applications/<app>/jobs: JobData.status.
enum class RestJobStatus : std::uint8_t { kRunning, kSucceeded, kFailed, kUnknown };

struct RestJob {
  std::int32_t job_id = 0;
  RestJobStatus status = RestJobStatus::kUnknown;
  std::optional<events::EpochMillis> submission_time_ms;
  std::optional<events::EpochMillis> completion_time_ms;
  std::vector<std::int32_t> stage_ids;
  std::vector<std::string> job_tags;        // "jobTags" (3.5+); empty before
  std::optional<std::string> job_group_id;  // "jobGroup"
};

// /applications/<app>/stages: StageData.status.
enum class RestStageStatus : std::uint8_t { kActive, kComplete, kFailed, kPending, kSkipped, kUnknown };

// One stage attempt, with the sums over its tasks that StageData carries (same units as the event
// log: times in ms except the CPU and shuffle-write times in ns).
struct RestStage {
  std::int32_t stage_id = 0;
  std::int32_t attempt_id = 0;
  RestStageStatus status = RestStageStatus::kUnknown;
  std::int32_t num_tasks = 0;
  std::int32_t num_complete_tasks = 0;
  std::int32_t num_failed_tasks = 0;
  std::int32_t num_killed_tasks = 0;
  std::optional<events::EpochMillis> submission_time_ms;
  std::optional<events::EpochMillis> first_task_launched_time_ms;
  std::optional<events::EpochMillis> completion_time_ms;
  std::optional<std::string> failure_reason;  // cut to kMaxMessageBytes
  // Sums over the stage's tasks, as Spark's status store adds them up (peakExecutionMemory too is
  // Spark's sum of the task peaks, copied as given).
  events::TaskMetrics task_metrics_sum;
};

// /applications/<app>/allexecutors: ExecutorSummary (the driver is listed too, as "driver").
struct RestExecutor {
  std::string executor_id;
  std::string host;  // "hostPort" without the port
  std::int32_t total_cores = 0;
  bool active = true;
  std::optional<events::EpochMillis> add_time_ms;
  std::optional<events::EpochMillis> remove_time_ms;
  std::string remove_reason;  // cut to kMaxMessageBytes
};

}  // namespace sparktrace::listener::rest
