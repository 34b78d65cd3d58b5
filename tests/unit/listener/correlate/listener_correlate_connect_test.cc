// Spark Connect correlation on synthetic event sequences (no real log comes from a Connect
// server): operation ↔ jobs ↔ stages, SQL executions joined through jobTags, two sessions
// interleaved, jobs arriving after the operation ended, and the 3.5.0/3.5.1 tag order.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"
#include "listener/correlate/span_builder.h"
#include "listener/correlate/span_ids.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"

namespace sparktrace::listener::correlate {
namespace {

namespace lines = test_lines;
using tracing::Span;

using test_lines::kOperationA;
using test_lines::kOperationB;
using test_lines::kSessionA;
using test_lines::kSessionB;
constexpr std::string_view kOperationC = "cccccccc-0000-4000-8000-000000000001";
const std::string kTagA = lines::OperationTag("alice", kSessionA, kOperationA);
const std::string kTagB = lines::OperationTag("bob_the_user", kSessionB, kOperationB);
const std::string kTagC = lines::OperationTag("alice", kSessionA, kOperationC);
const std::string kSessionTagA =
    "SparkConnect_SessionTag_User_alice_Session_" + std::string(kSessionA) + "_Tag_nightly";

OperationSpanRef SpanRef(std::uint8_t seed) {
  OperationSpanRef ref;
  ref.trace.fill(seed);
  ref.parent.fill(static_cast<std::uint8_t>(seed + 1));
  return ref;
}

const Span* FindSpan(const std::vector<Span>& spans, std::string_view name, std::string_view int_key = "",
                     std::int64_t int_value = 0) {
  for (const Span& span : spans) {
    if (span.name != name) continue;
    if (int_key.empty()) return &span;
    for (const tracing::Attribute& attribute : span.attributes) {
      if (attribute.key == int_key && std::get_if<std::int64_t>(&attribute.value) != nullptr &&
          std::get<std::int64_t>(attribute.value) == int_value) {
        return &span;
      }
    }
  }
  return nullptr;
}

template <typename T>
std::optional<T> AttributeOf(const Span& span, std::string_view key) {
  for (const tracing::Attribute& attribute : span.attributes) {
    if (attribute.key == key) {
      if (const T* value = std::get_if<T>(&attribute.value)) return *value;
    }
  }
  return std::nullopt;
}

// Two sessions, each running one operation, with their events interleaved in the log:
//   app start 1000, executor 1500
//   A (alice, session A): Started 2000, Analyzed 2010, Ready 2020, job 0 at 2030 with stages 0, 1;
//     stage 0 [2031, 2500] three tasks (100, 200 ms, one failed), stage 1 [2501, 2800] writes
//     output; job 0 ends 2801; Finished 2810; Closed 2900.
//   B (bob_the_user, session B): Started 2100, job 1 at 2200 with stage 2 [2201, 2600];
//     job 1 ends 2601; Finished 2610; Closed 2620.
std::vector<std::string> TwoInterleavedSessions() {
  return {lines::LogStart("4.0.0"),
          lines::AppStart("app-connect", 1000),
          lines::ExecutorAdded("1", 1500),
          lines::ConnectOperation("Started", kTagA, kOperationA, 2000, kSessionA, "alice"),
          lines::ConnectOperation("Analyzed", kTagA, kOperationA, 2010),
          lines::ConnectOperation("ReadyForExecution", kTagA, kOperationA, 2020),
          lines::JobStart(0, 2030, {0, 1}, {kSessionTagA, kTagA}),
          lines::StageSubmitted(0, 2031, 3),
          lines::ConnectOperation("Started", kTagB, kOperationB, 2100, kSessionB, "bob_the_user"),
          lines::TaskEnd(0, 1, 2040, 2140, {.shuffle_write_bytes = 100, .peak_memory = 64}),
          lines::JobStart(1, 2200, {2}, {kTagB}),
          lines::StageSubmitted(2, 2201, 1),
          lines::TaskEnd(0, 2, 2050, 2250, {.shuffle_write_bytes = 50, .peak_memory = 128}),
          lines::TaskEnd(0, 3, 2060, 2490, {.failed = true}),
          lines::StageCompleted(0, 2031, 2500, 3),
          lines::StageSubmitted(1, 2501, 1),
          lines::TaskEnd(2, 4, 2210, 2590, {.input_bytes = 4096}),
          lines::StageCompleted(2, 2201, 2600, 1),
          lines::JobEnd(1, 2601),
          lines::ConnectOperation("Finished", kTagB, kOperationB, 2610),
          lines::ConnectOperation("Closed", kTagB, kOperationB, 2620),
          lines::TaskEnd(1, 5, 2510, 2790, {.output_bytes = 2048, .output_records = 10}),
          lines::StageCompleted(1, 2501, 2800, 1),
          lines::JobEnd(0, 2801),
          lines::ConnectOperation("Finished", kTagA, kOperationA, 2810),
          lines::ConnectOperation("Closed", kTagA, kOperationA, 2900),
          lines::AppEnd(3000)};
}

TEST(ListenerCorrelateConnect, OperationsJobsAndStagesOfTwoInterleavedSessions) {
  ApplicationModel model;
  lines::Feed(model, TwoInterleavedSessions());
  ASSERT_EQ(model.operations().size(), 2U);
  EXPECT_EQ(model.JobsOfOperation(kOperationA), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(model.JobsOfOperation(kOperationB), (std::vector<std::int32_t>{1}));
  const ConnectOperationRecord* a = model.FindOperation(kOperationA);
  const ConnectOperationRecord* b = model.FindOperation(kOperationB);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->session_id, kSessionA);
  EXPECT_EQ(a->user_id, "alice");
  EXPECT_EQ(b->session_id, kSessionB);
  EXPECT_EQ(b->user_id, "bob_the_user");
  EXPECT_EQ(a->job_tag, kTagA);
  EXPECT_EQ(a->produced_row_count, 7);

  const std::vector<const StageAttemptRecord*> stages_of_job0 = model.StagesOfJob(0);
  ASSERT_EQ(stages_of_job0.size(), 2U);
  EXPECT_EQ(stages_of_job0[0]->key.stage_id, 0);
  EXPECT_EQ(stages_of_job0[1]->key.stage_id, 1);
  const TaskStatistics& stage0 = stages_of_job0[0]->tasks;
  EXPECT_EQ(stage0.tasks_ended, 3);
  EXPECT_EQ(stage0.failed_tasks, 1);
  EXPECT_EQ(stage0.successful_durations.count(), 2);
  EXPECT_EQ(stage0.shuffle_write_bytes, 150);
  EXPECT_EQ(stage0.max_peak_execution_memory_bytes, 128);

  // Operation A, window [2000, 2810] with only its own stages (stage 2 of B does not count):
  //   idle [2000,2031) 31 + [2500,2501) 1 + [2800,2810) 10 = 42; compute [2031,2500) 469;
  //   io_write [2501,2800) 299 (stage 1 wrote output).
  const std::optional<PhaseBreakdown> phases_a = OperationPhases(model, *a);
  ASSERT_TRUE(phases_a.has_value());
  EXPECT_EQ(phases_a->window.start_ms, 2000);
  EXPECT_EQ(phases_a->window.end_ms, 2810);
  EXPECT_EQ(phases_a->TotalMs(Phase::kIdle), 42);
  EXPECT_EQ(phases_a->TotalMs(Phase::kCompute), 469);
  EXPECT_EQ(phases_a->TotalMs(Phase::kIoWrite), 299);
  EXPECT_EQ(phases_a->TotalMs(Phase::kResourceWait), 0);
  // Operation B, window [2100, 2610]: idle 101 + 10, compute [2201,2600) 399.
  const std::optional<PhaseBreakdown> phases_b = OperationPhases(model, *b);
  ASSERT_TRUE(phases_b.has_value());
  EXPECT_EQ(phases_b->TotalMs(Phase::kIdle), 111);
  EXPECT_EQ(phases_b->TotalMs(Phase::kCompute), 399);
  EXPECT_EQ(phases_b->TotalMs(Phase::kIoWrite), 0);
}

TEST(ListenerCorrelateConnect, OperationSpansHangUnderTheProxysOperationSpan) {
  ApplicationModel model;
  lines::Feed(model, TwoInterleavedSessions());
  const OperationSpanRef ref = SpanRef(0x10);
  const BuiltSpans built = BuildOperationSpans(model, kOperationA, ref);
  EXPECT_EQ(built.dropped_phase_intervals, 0);
  for (const Span& span : built.spans) {
    EXPECT_EQ(span.trace_id, ref.trace) << span.name;
    EXPECT_TRUE(tracing::IsValid(span.span_id)) << span.name;
  }

  const Span* lifecycle = FindSpan(built.spans, "spark.connect.operation.lifecycle");
  ASSERT_NE(lifecycle, nullptr);
  EXPECT_EQ(lifecycle->parent_span_id, ref.parent);
  EXPECT_EQ(lifecycle->start_time_unix_nano, 2000ULL * 1'000'000);
  EXPECT_EQ(lifecycle->end_time_unix_nano, 2900ULL * 1'000'000);
  std::vector<std::string> event_names;
  for (const tracing::SpanEvent& event : lifecycle->events) event_names.push_back(event.name);
  EXPECT_EQ(event_names, (std::vector<std::string>{"started", "analyzed", "ready", "finished", "closed"}));
  EXPECT_EQ(lifecycle->events[1].time_unix_nano, 2010ULL * 1'000'000);

  const Span* job = FindSpan(built.spans, "spark.job", "spark.job.id", 0);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->parent_span_id, ref.parent);
  EXPECT_EQ(job->start_time_unix_nano, 2030ULL * 1'000'000);
  EXPECT_EQ(job->end_time_unix_nano, 2801ULL * 1'000'000);
  EXPECT_EQ(AttributeOf<std::string>(*job, "spark.job.status"), "succeeded");
  EXPECT_EQ(AttributeOf<std::vector<std::string>>(*job, "spark.job.stage_ids"),
            (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(FindSpan(built.spans, "spark.job", "spark.job.id", 1), nullptr) << "job 1 is operation B's";

  const Span* stage0 = FindSpan(built.spans, "spark.stage", "spark.stage.id", 0);
  ASSERT_NE(stage0, nullptr);
  EXPECT_EQ(stage0->parent_span_id, job->span_id);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.attempt"), 0);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.tasks"), 3);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.failed_tasks"), 1);
  // Successful durations 100 and 200 (nearest rank).
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.task_duration_ms.p50"), 100);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.task_duration_ms.p95"), 200);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.task_duration_ms.max"), 200);
  // Run time = duration in these lines, every task (the failed one too): 100 + 200 + 430.
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.executor_run_time_ms"), 730);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.executor_cpu_time_ms"), 365);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.jvm_gc_time_ms"), 6);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.shuffle_write_bytes"), 150);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage0, "spark.stage.peak_execution_memory_bytes"), 128);
  const Span* stage1 = FindSpan(built.spans, "spark.stage", "spark.stage.id", 1);
  ASSERT_NE(stage1, nullptr);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage1, "spark.stage.output_bytes"), 2048);
  EXPECT_EQ(AttributeOf<std::int64_t>(*stage1, "spark.stage.output_records"), 10);

  // Phases: idle, compute, idle, io_write, idle — under the operation span.
  std::vector<std::string> phase_names;
  for (const Span& span : built.spans) {
    if (span.name.starts_with("spark.phase.")) {
      phase_names.push_back(span.name);
      EXPECT_EQ(span.parent_span_id, ref.parent);
    }
  }
  EXPECT_EQ(phase_names,
            (std::vector<std::string>{"spark.phase.idle", "spark.phase.compute", "spark.phase.idle",
                                      "spark.phase.io_write", "spark.phase.idle"}));
  const Span* io_write = FindSpan(built.spans, "spark.phase.io_write");
  ASSERT_NE(io_write, nullptr);
  EXPECT_EQ(AttributeOf<std::int64_t>(*io_write, "spark.phase.total_ms"), 299);

  // The application trace leaves the Connect jobs to their operations.
  const BuiltSpans application = BuildApplicationSpans(model);
  EXPECT_EQ(FindSpan(application.spans, "spark.job"), nullptr);
  ASSERT_NE(FindSpan(application.spans, "spark.application"), nullptr);
}

// Jobs of an operation whose events reach the log after the operation's Closed event (the
// listener bus is asynchronous; a cancelled job winds down later): built again, they hang under
// the same operation span, and spans already emitted keep their ids.
TEST(ListenerCorrelateConnect, JobsArrivingAfterTheOperationEnded) {
  ApplicationModel model;
  lines::Feed(model,
              {lines::LogStart("3.5.2"), lines::AppStart("app-late", 1000), lines::ExecutorAdded("1", 1000),
               lines::ConnectOperation("Started", kTagA, kOperationA, 4000, kSessionA, "alice"),
               lines::ConnectOperation("Finished", kTagA, kOperationA, 4100),
               lines::ConnectOperation("Closed", kTagA, kOperationA, 4110)});
  const OperationSpanRef ref = SpanRef(0x20);
  const BuiltSpans before = BuildOperationSpans(model, kOperationA, ref);
  EXPECT_EQ(FindSpan(before.spans, "spark.job"), nullptr);
  const Span* lifecycle_before = FindSpan(before.spans, "spark.connect.operation.lifecycle");
  ASSERT_NE(lifecycle_before, nullptr);

  lines::Feed(model, {lines::JobStart(4, 4060, {5}, {kTagA}), lines::StageSubmitted(5, 4061, 1)});
  const BuiltSpans running = BuildOperationSpans(model, kOperationA, ref);
  const Span* job_running = FindSpan(running.spans, "spark.job", "spark.job.id", 4);
  ASSERT_NE(job_running, nullptr);
  EXPECT_EQ(AttributeOf<std::string>(*job_running, "spark.job.status"), "running");
  EXPECT_EQ(job_running->parent_span_id, ref.parent);

  lines::Feed(model, {lines::TaskEnd(5, 1, 4070, 4140), lines::StageCompleted(5, 4061, 4150, 1),
                      lines::JobEnd(4, 4151, /*succeeded=*/false)});
  const BuiltSpans after = BuildOperationSpans(model, kOperationA, ref);
  const Span* job_after = FindSpan(after.spans, "spark.job", "spark.job.id", 4);
  ASSERT_NE(job_after, nullptr);
  EXPECT_EQ(job_after->span_id, job_running->span_id) << "same job, same span id";
  EXPECT_EQ(job_after->trace_id, ref.trace);
  EXPECT_EQ(job_after->parent_span_id, ref.parent);
  EXPECT_EQ(AttributeOf<std::string>(*job_after, "spark.job.status"), "failed");
  EXPECT_EQ(job_after->status_code, tracing::StatusCode::kError);
  EXPECT_EQ(job_after->end_time_unix_nano, 4151ULL * 1'000'000);
  const Span* stage_after = FindSpan(after.spans, "spark.stage", "spark.stage.id", 5);
  ASSERT_NE(stage_after, nullptr);
  EXPECT_EQ(stage_after->parent_span_id, job_after->span_id);
  const Span* lifecycle_after = FindSpan(after.spans, "spark.connect.operation.lifecycle");
  ASSERT_NE(lifecycle_after, nullptr);
  EXPECT_EQ(lifecycle_after->span_id, lifecycle_before->span_id);
  // The window stretches to the late job's end: [4000, 4151].
  const std::optional<PhaseBreakdown> phases = OperationPhases(model, *model.FindOperation(kOperationA));
  ASSERT_TRUE(phases.has_value());
  EXPECT_EQ(phases->window.end_ms, 4151);
  EXPECT_EQ(phases->TotalMs(Phase::kCompute), 4150 - 4061);

  // Under a different proxy span (another trace of the same operation), different span ids.
  const BuiltSpans elsewhere = BuildOperationSpans(model, kOperationA, SpanRef(0x30));
  const Span* job_elsewhere = FindSpan(elsewhere.spans, "spark.job", "spark.job.id", 4);
  ASSERT_NE(job_elsewhere, nullptr);
  EXPECT_NE(job_elsewhere->span_id, job_after->span_id);
}

// Spark 3.5.0 and 3.5.1 write User_<sessionId>_Session_<userId>. Here the user id is itself a
// UUID, so only the Spark version tells the order; the operation has no Connect events of its
// own (e.g. an event log that filtered them), so session and user come from the job tag alone.
TEST(ListenerCorrelateConnect, SwappedTagOrderOfSpark350) {
  const std::string user_uuid = "99999999-8888-4777-8666-555555555555";
  const std::string swapped_tag = "SparkConnect_OperationTag_User_" + std::string(kSessionA) + "_Session_" +
                                  user_uuid + "_Operation_" + std::string(kOperationA);
  ApplicationModel model;
  lines::Feed(model,
              {lines::LogStart("3.5.0"), lines::AppStart("app-350", 1000), lines::ExecutorAdded("1", 1100),
               lines::JobStart(0, 2000, {0}, {swapped_tag}), lines::StageSubmitted(0, 2001, 1),
               lines::StageCompleted(0, 2001, 2100, 1), lines::JobEnd(0, 2101)});
  const ConnectOperationRecord* operation = model.FindOperation(kOperationA);
  ASSERT_NE(operation, nullptr);
  EXPECT_EQ(operation->session_id, kSessionA);
  EXPECT_EQ(operation->user_id, user_uuid);
  EXPECT_EQ(operation->job_tag, swapped_tag);
  EXPECT_EQ(model.JobsOfOperation(kOperationA), (std::vector<std::int32_t>{0}));
  // Without Started, the window starts with the first job: [2000, 2101].
  const std::optional<TimeWindow> window = OperationWindow(model, *operation);
  ASSERT_TRUE(window.has_value());
  EXPECT_EQ(window->start_ms, 2000);
  EXPECT_EQ(window->end_ms, 2101);
  const BuiltSpans built = BuildOperationSpans(model, kOperationA, SpanRef(0x40));
  EXPECT_EQ(FindSpan(built.spans, "spark.connect.operation.lifecycle"), nullptr);
  EXPECT_NE(FindSpan(built.spans, "spark.job", "spark.job.id", 0), nullptr);

  // The Connect events of a 3.5.0 server carry the same swapped tag; joining by operation id
  // makes the order irrelevant, and Started's own session/user fields win.
  ApplicationModel with_events;
  lines::Feed(with_events,
              {lines::LogStart("3.5.0"), lines::AppStart("app-350", 1000),
               lines::ConnectOperation("Started", swapped_tag, kOperationA, 1900, kSessionA, user_uuid),
               lines::JobStart(0, 2000, {0}, {swapped_tag}), lines::JobEnd(0, 2101),
               lines::ConnectOperation("Finished", swapped_tag, kOperationA, 2110)});
  EXPECT_EQ(with_events.JobsOfOperation(kOperationA), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(with_events.FindOperation(kOperationA)->session_id, kSessionA);
}

// SQL executions join through SparkListenerSQLExecutionStart.jobTags (3.5+): a job without the
// operation tag itself joins through its execution, and a nested execution without tags
// through its root execution.
TEST(ListenerCorrelateConnect, SqlExecutionJoinThroughJobTags) {
  ApplicationModel model;
  lines::Feed(model,
              {lines::LogStart("4.0.0"), lines::AppStart("app-sql", 1000), lines::ExecutorAdded("1", 1000),
               lines::ConnectOperation("Started", kTagC, kOperationC, 2990, kSessionA, "alice"),
               lines::SqlExecutionStart(5, 3000, {kTagC, kSessionTagA}),
               lines::JobStart(2, 3010, {7}, {}, /*sql_execution_id=*/5), lines::JobEnd(2, 3050),
               lines::SqlExecutionStart(6, 3060, {}, /*root_id=*/5),
               lines::JobStart(3, 3070, {8}, {}, /*sql_execution_id=*/6), lines::JobEnd(3, 3090),
               lines::SqlExecutionEnd(6, 3095), lines::SqlExecutionEnd(5, 3100),
               lines::JobStart(9, 3200, {9}, {}),  // no tag, no execution: no operation
               lines::JobEnd(9, 3210), lines::ConnectOperation("Finished", kTagC, kOperationC, 3110)});
  EXPECT_EQ(model.sql_executions().at(5).connect_operation_id, std::string(kOperationC));
  EXPECT_EQ(model.JobsOfOperation(kOperationC), (std::vector<std::int32_t>{2, 3}));
  EXPECT_FALSE(model.OperationOfJob(model.jobs().at(9)).has_value());
  const BuiltSpans built = BuildOperationSpans(model, kOperationC, SpanRef(0x50));
  const Span* job2 = FindSpan(built.spans, "spark.job", "spark.job.id", 2);
  ASSERT_NE(job2, nullptr);
  EXPECT_EQ(AttributeOf<std::int64_t>(*job2, "spark.sql.execution_id"), 5);
  EXPECT_EQ(AttributeOf<std::string>(*job2, "spark.connect.operation_id"), std::string(kOperationC));
  // Job 9 belongs to no operation: it is in the application's own trace.
  const BuiltSpans application = BuildApplicationSpans(model);
  EXPECT_NE(FindSpan(application.spans, "spark.job", "spark.job.id", 9), nullptr);
  EXPECT_EQ(FindSpan(application.spans, "spark.job", "spark.job.id", 2), nullptr);
}

// A write command whose writer reports no Output Metrics: told by the caller, the result stage
// of each of the operation's jobs is io_write. Job 0 has stages 0 (scan) and 1 (result):
//   window [1000, 1300]: idle [1000,1010), compute [1010,1100) stage 0, io_write [1100,1250)
//   stage 1, idle [1250,1300).
TEST(ListenerCorrelateConnect, WriteCommandResultStagesAreIoWrite) {
  ApplicationModel model;
  lines::Feed(model,
              {lines::LogStart("4.0.0"), lines::AppStart("app-write", 500), lines::ExecutorAdded("1", 500),
               lines::ConnectOperation("Started", kTagA, kOperationA, 1000, kSessionA, "alice"),
               lines::JobStart(0, 1005, {0, 1}, {kTagA}), lines::StageSubmitted(0, 1010, 1),
               lines::StageCompleted(0, 1010, 1100, 1), lines::StageSubmitted(1, 1100, 1),
               lines::StageCompleted(1, 1100, 1250, 1), lines::JobEnd(0, 1251),
               lines::ConnectOperation("Finished", kTagA, kOperationA, 1300)});
  const ConnectOperationRecord& operation = *model.FindOperation(kOperationA);
  const std::optional<PhaseBreakdown> as_query = OperationPhases(model, operation);
  ASSERT_TRUE(as_query.has_value());
  EXPECT_EQ(as_query->TotalMs(Phase::kIoWrite), 0);
  EXPECT_EQ(as_query->TotalMs(Phase::kCompute), 240);
  const std::optional<PhaseBreakdown> as_write = OperationPhases(model, operation, /*write_command=*/true);
  ASSERT_TRUE(as_write.has_value());
  EXPECT_EQ(as_write->TotalMs(Phase::kIoWrite), 150);
  EXPECT_EQ(as_write->TotalMs(Phase::kCompute), 90);
  EXPECT_EQ(as_write->TotalMs(Phase::kIdle), 60);
  const BuiltSpans built =
      BuildOperationSpans(model, kOperationA, SpanRef(0x60), SpanBuildOptions{.write_command = true});
  EXPECT_NE(FindSpan(built.spans, "spark.phase.io_write"), nullptr);
}

// A Connect server runs for weeks: finished operations are forgotten with their jobs, stages and
// SQL executions, while running ones (and their indexes) stay intact.
TEST(ListenerCorrelateConnect, ForgetFinishedOperations) {
  ApplicationModel model;
  lines::Feed(model, TwoInterleavedSessions());
  // B closed at 2620; A closed at 2900.
  ApplicationModel::ForgetStats stats = model.ForgetFinishedBefore(2700);
  EXPECT_EQ(stats.operations, 1);
  EXPECT_EQ(stats.jobs, 1);
  EXPECT_EQ(stats.stage_attempts, 1);
  EXPECT_EQ(model.FindOperation(kOperationB), nullptr);
  ASSERT_NE(model.FindOperation(kOperationA), nullptr);
  EXPECT_EQ(model.JobsOfOperation(kOperationA), (std::vector<std::int32_t>{0}));
  EXPECT_EQ(model.StagesOfJob(0).size(), 2U);
  EXPECT_FALSE(model.stages().contains({2, 0}));
  const BuiltSpans still_a = BuildOperationSpans(model, kOperationA, SpanRef(0x70));
  EXPECT_NE(FindSpan(still_a.spans, "spark.job", "spark.job.id", 0), nullptr);
  EXPECT_NE(FindSpan(still_a.spans, "spark.stage", "spark.stage.id", 1), nullptr);

  stats = model.ForgetFinishedBefore(5000);
  EXPECT_EQ(stats.operations, 1);
  EXPECT_EQ(stats.jobs, 1);
  EXPECT_EQ(stats.stage_attempts, 2);
  EXPECT_TRUE(model.operations().empty());
  EXPECT_TRUE(model.jobs().empty());
  EXPECT_TRUE(model.stages().empty());

  // SQL executions go with their operation; a job still running keeps its operation.
  ApplicationModel sql;
  lines::Feed(sql,
              {lines::LogStart("4.0.0"), lines::AppStart("app-forget", 1000),
               lines::ConnectOperation("Started", kTagC, kOperationC, 2990, kSessionA, "alice"),
               lines::SqlExecutionStart(5, 3000, {kTagC}), lines::JobStart(2, 3010, {7}, {}, 5),
               lines::SqlExecutionStart(6, 3060, {}, /*root_id=*/5), lines::JobStart(3, 3070, {8}, {}, 6),
               lines::JobEnd(2, 3050), lines::ConnectOperation("Canceled", kTagC, kOperationC, 3080),
               lines::ConnectOperation("Closed", kTagC, kOperationC, 3090)});
  stats = sql.ForgetFinishedBefore(10'000);
  EXPECT_EQ(stats.operations, 0) << "job 3 has not ended";
  EXPECT_EQ(sql.JobsOfOperation(kOperationC), (std::vector<std::int32_t>{2, 3}));
  lines::Feed(sql, {lines::JobEnd(3, 3100)});
  stats = sql.ForgetFinishedBefore(10'000);
  EXPECT_EQ(stats.operations, 1);
  EXPECT_EQ(stats.jobs, 2);
  EXPECT_EQ(stats.sql_executions, 2);
  EXPECT_TRUE(sql.sql_executions().empty());
}

TEST(ListenerCorrelateConnect, UnknownOperationBuildsNothing) {
  ApplicationModel model;
  lines::Feed(model, TwoInterleavedSessions());
  EXPECT_TRUE(BuildOperationSpans(model, "no-such-operation", SpanRef(1)).spans.empty());
}

}  // namespace
}  // namespace sparktrace::listener::correlate
