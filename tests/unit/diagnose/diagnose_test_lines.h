#pragma once
// Builders of hand-written Spark event-log lines for the diagnosis tests: an application with
// executors, an environment, jobs and stages of generated tasks (each task adjustable), fed through
// the production parser into an ApplicationModel (listener_correlate_test_lines.h's Feed).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/diagnose.h"
#include "diagnose/finding.h"
#include "listener/correlate/application_model.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::diagnose::test_lines {

using listener::correlate::test_lines::Quoted;
using listener::correlate::test_lines::Str;

inline constexpr std::int64_t kT0 = 1'700'000'000'000;  // the application's start
inline constexpr std::int64_t kMiBytes = std::int64_t{1} << 20;

// One task end; failure_reason is a whole "Task End Reason" object (empty: Success).
struct Task {
  int stage = 0;
  int stage_attempt = 0;
  std::int64_t task_id = 0;
  std::int64_t launch_ms = 0;
  std::int64_t finish_ms = 0;
  std::string executor = "1";
  std::string failure_reason;
  std::int64_t input_bytes = 0;
  std::int64_t shuffle_read_bytes = 0;
  std::int64_t shuffle_write_bytes = 0;
  std::int64_t shuffle_write_time_ns = 0;
  std::int64_t fetch_wait_ms = 0;
  std::int64_t output_bytes = 0;
  std::int64_t gc_ms = 0;
  std::int64_t memory_spilled = 0;
  std::int64_t disk_spilled = 0;
  double cpu_share = 0.9;  // executor CPU time / run time (a task blocked on I/O is off the CPU)
  std::int64_t deserialize_ms = 0;
  std::int64_t result_serialization_ms = 0;
  // "Task Executor Metrics"."JVMHeapMemory"; nullopt: no Task Executor Metrics (before 3.0).
  std::optional<std::int64_t> jvm_heap_bytes;
};

inline std::string TaskEndLine(const Task& task) {
  const bool failed = !task.failure_reason.empty();
  const std::int64_t run_ms = task.finish_ms - task.launch_ms;
  return R"({"Event":"SparkListenerTaskEnd","Stage ID":)" + Str(task.stage) + R"(,"Stage Attempt ID":)" +
         Str(task.stage_attempt) + R"(,"Task Type":"ShuffleMapTask","Task End Reason":)" +
         (failed ? task.failure_reason : R"({"Reason":"Success"})") + R"(,"Task Info":{"Task ID":)" +
         Str(task.task_id) + R"(,"Index":)" + Str(task.task_id) + R"(,"Attempt":0,"Launch Time":)" +
         Str(task.launch_ms) + R"(,"Executor ID":)" + Quoted(task.executor) +
         R"(,"Host":"h","Locality":"ANY","Speculative":false,"Getting Result Time":0,"Finish Time":)" +
         Str(task.finish_ms) + R"(,"Failed":)" + (failed ? "true" : "false") +
         R"(,"Killed":false,"Accumulables":[]},)" +
         (task.jvm_heap_bytes ? R"("Task Executor Metrics":{"JVMHeapMemory":)" + Str(*task.jvm_heap_bytes) +
                                    R"(,"JVMOffHeapMemory":1000,"TotalGCTime":0},)"
                              : std::string()) +
         R"("Task Metrics":{"Executor Deserialize Time":)" + Str(task.deserialize_ms) +
         R"(,"Executor Run Time":)" + Str(run_ms) + R"(,"Executor CPU Time":)" +
         Str(static_cast<std::int64_t>(static_cast<double>(run_ms) * task.cpu_share * 1e6)) +
         R"(,"Result Size":10,"JVM GC Time":)" + Str(task.gc_ms) + R"(,"Result Serialization Time":)" +
         Str(task.result_serialization_ms) + R"(,"Memory Bytes Spilled":)" + Str(task.memory_spilled) +
         R"(,"Disk Bytes Spilled":)" + Str(task.disk_spilled) +
         R"(,"Peak Execution Memory":0,"Shuffle Read Metrics":{"Remote Bytes Read":)" +
         Str(task.shuffle_read_bytes) + R"(,"Local Bytes Read":0,"Fetch Wait Time":)" +
         Str(task.fetch_wait_ms) +
         R"(,"Total Records Read":0},"Shuffle Write Metrics":{"Shuffle Bytes Written":)" +
         Str(task.shuffle_write_bytes) + R"(,"Shuffle Write Time":)" + Str(task.shuffle_write_time_ns) +
         R"(,"Shuffle Records Written":0},"Input Metrics":{"Bytes Read":)" + Str(task.input_bytes) +
         R"(,"Records Read":0},"Output Metrics":{"Bytes Written":)" + Str(task.output_bytes) +
         R"(,"Records Written":)" + Str(task.output_bytes > 0 ? 100 : 0) + "}}}";
}

inline std::string StageLine(bool completed, int stage_id, int attempt, std::string_view name, int num_tasks,
                             std::int64_t submitted_ms, std::int64_t completed_ms,
                             const std::optional<std::string>& failure_reason = std::nullopt) {
  std::string info = R"({"Stage ID":)" + Str(stage_id) + R"(,"Stage Attempt ID":)" + Str(attempt) +
                     R"(,"Stage Name":)" + Quoted(name) + R"(,"Number of Tasks":)" + Str(num_tasks) +
                     R"(,"Submission Time":)" + Str(submitted_ms);
  if (completed) info += R"(,"Completion Time":)" + Str(completed_ms);
  if (completed && failure_reason) info += R"(,"Failure Reason":)" + Quoted(*failure_reason);
  info += "}";
  return std::string(R"({"Event":"SparkListenerStage)") + (completed ? "Completed" : "Submitted") +
         R"(","Stage Info":)" + info + R"(,"Properties":{}})";
}

inline std::string EnvironmentLine(const std::map<std::string, std::string>& spark,
                                   const std::map<std::string, std::string>& hadoop = {}) {
  const auto object = [](const std::map<std::string, std::string>& properties) {
    std::string text = "{";
    for (const auto& [key, value] : properties)
      text += (text.size() > 1 ? "," : "") + Quoted(key) + ":" + Quoted(value);
    return text + "}";
  };
  return R"({"Event":"SparkListenerEnvironmentUpdate","JVM Information":{"Java Version":"17"},"Spark Properties":)" +
         object(spark) + R"(,"Hadoop Properties":)" + object(hadoop) +
         R"(,"System Properties":{"user.name":"x"},"Classpath Entries":{}})";
}

// A stage of `tasks` equal tasks of task_ms, run in waves over `slots` slots from `start_ms`,
// round-robin over `executors`; `adjust(index, task)` changes one task before it is written.
struct StageSpec {
  int stage_id = 0;
  int attempt = 0;
  std::string name = "map at Job.scala:10";
  std::int64_t start_ms = 0;
  int tasks = 16;
  std::int64_t task_ms = 10'000;
  int slots = 8;
  std::vector<std::string> executors = {"1", "2"};
  Task figures;  // per-task figures copied to every task
  std::function<void(int, Task&)> adjust;
  std::optional<std::string> failure_reason;
};

class LogBuilder {
 public:
  LogBuilder() {
    lines_.push_back(listener::correlate::test_lines::LogStart("3.5.1"));
    lines_.push_back(listener::correlate::test_lines::AppStart("app-test", kT0));
  }

  LogBuilder& Line(std::string line) {
    lines_.push_back(std::move(line));
    return *this;
  }
  LogBuilder& Executor(std::string_view id, std::int64_t at_ms, int cores = 4) {
    return Line(R"({"Event":"SparkListenerExecutorAdded","Timestamp":)" + Str(at_ms) + R"(,"Executor ID":)" +
                Quoted(id) + R"(,"Executor Info":{"Host":"h","Total Cores":)" + Str(cores) + "}}");
  }
  LogBuilder& ExecutorRemoved(std::string_view id, std::int64_t at_ms, std::string_view reason) {
    return Line(R"({"Event":"SparkListenerExecutorRemoved","Timestamp":)" + Str(at_ms) +
                R"(,"Executor ID":)" + Quoted(id) + R"(,"Removed Reason":)" + Quoted(reason) + "}");
  }
  LogBuilder& Environment(const std::map<std::string, std::string>& spark,
                          const std::map<std::string, std::string>& hadoop = {}) {
    return Line(EnvironmentLine(spark, hadoop));
  }
  LogBuilder& JobStart(int job_id, std::int64_t at_ms, const std::vector<int>& stage_ids,
                       const std::vector<std::string>& tags = {}) {
    return Line(listener::correlate::test_lines::JobStart(job_id, at_ms, stage_ids, tags));
  }
  LogBuilder& JobEnd(int job_id, std::int64_t at_ms, bool succeeded = true) {
    return Line(listener::correlate::test_lines::JobEnd(job_id, at_ms, succeeded));
  }
  // Writes the stage's submission, tasks and completion; returns its completion time.
  std::int64_t Stage(const StageSpec& spec) {
    lines_.push_back(StageLine(false, spec.stage_id, spec.attempt, spec.name, spec.tasks, spec.start_ms, 0));
    std::int64_t end_ms = spec.start_ms;
    for (int i = 0; i < spec.tasks; ++i) {
      Task task = spec.figures;
      task.stage = spec.stage_id;
      task.stage_attempt = spec.attempt;
      task.task_id = next_task_id_++;
      task.launch_ms = spec.start_ms + (i / spec.slots) * spec.task_ms;
      task.finish_ms = task.launch_ms + spec.task_ms;
      task.executor = spec.executors[static_cast<std::size_t>(i) % spec.executors.size()];
      if (spec.adjust) spec.adjust(i, task);
      end_ms = std::max(end_ms, task.finish_ms);
      lines_.push_back(TaskEndLine(task));
    }
    end_ms += 10;
    lines_.push_back(StageLine(true, spec.stage_id, spec.attempt, spec.name, spec.tasks, spec.start_ms,
                               end_ms, spec.failure_reason));
    return end_ms;
  }
  LogBuilder& AppEnd(std::int64_t at_ms) { return Line(listener::correlate::test_lines::AppEnd(at_ms)); }

  const std::vector<std::string>& lines() const { return lines_; }

 private:
  std::vector<std::string> lines_;
  std::int64_t next_task_id_ = 0;
};

inline listener::correlate::ApplicationModel ModelOf(const LogBuilder& builder) {
  listener::correlate::ApplicationModel model;
  listener::correlate::test_lines::Feed(model, builder.lines());
  return model;
}

// The rules' findings on `log`'s application.
inline std::vector<Finding> Diagnose(const LogBuilder& log, const RuleThresholds& thresholds = {}) {
  const listener::correlate::ApplicationModel model = ModelOf(log);
  return DiagnoseApplication(model, thresholds);
}

struct AppShape {
  std::int64_t executors_at_ms = 2'000;  // after the application's start
  std::int64_t end_after_ms = 1'000;     // application end after the last stage
};

// A healthy application: 2 executors of 4 cores at +2 s, job 0 (1 s later) = a 16-task compute
// stage then a 16-task stage reading its shuffle, each task 10 s on 8 slots; ends 1 s after the
// last stage. `tweak_stage1` changes stage 1 (the shuffle-reading stage).
inline LogBuilder HealthyApp(std::function<void(StageSpec&)> tweak_stage1 = {}, AppShape shape = {}) {
  LogBuilder log;
  const std::int64_t executors_at = kT0 + shape.executors_at_ms;
  log.Executor("1", executors_at).Executor("2", executors_at);
  log.JobStart(0, executors_at + 1'000, {0, 1});
  StageSpec compute;
  compute.stage_id = 0;
  compute.start_ms = executors_at + 1'000;
  compute.figures.input_bytes = 64 * kMiBytes;
  compute.figures.shuffle_write_bytes = 32 * kMiBytes;
  compute.figures.shuffle_write_time_ns = 200'000'000;
  compute.figures.gc_ms = 200;
  const std::int64_t compute_end = log.Stage(compute);
  StageSpec reduce;
  reduce.stage_id = 1;
  reduce.name = "count at Job.scala:20";
  reduce.start_ms = compute_end;
  reduce.figures.shuffle_read_bytes = 32 * kMiBytes;
  reduce.figures.fetch_wait_ms = 100;
  reduce.figures.gc_ms = 200;
  if (tweak_stage1) tweak_stage1(reduce);
  const std::int64_t reduce_end = log.Stage(reduce);
  log.JobEnd(0, reduce_end + 5);
  log.AppEnd(reduce_end + shape.end_after_ms);
  return log;
}

// Lookups in a diagnosis, for assertions and their messages.
inline const Finding* FindById(const std::vector<Finding>& findings, std::string_view id) {
  auto found = std::find_if(findings.begin(), findings.end(), [id](const Finding& f) { return f.id == id; });
  return found == findings.end() ? nullptr : &*found;
}

inline const Evidence* EvidenceNamed(const Finding& finding, std::string_view name) {
  auto found = std::find_if(finding.evidence.begin(), finding.evidence.end(),
                            [name](const Evidence& e) { return e.name == name; });
  return found == finding.evidence.end() ? nullptr : &*found;
}

// The findings' keys, for failure messages.
inline std::string Ids(const std::vector<Finding>& findings) {
  std::string ids;
  for (const Finding& finding : findings) ids += finding.Key() + " ";
  return ids;
}

}  // namespace sparktrace::diagnose::test_lines
