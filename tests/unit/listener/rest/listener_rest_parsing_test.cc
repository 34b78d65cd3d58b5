// The pieces of the REST feed that need no server: REST dates, the --spark-ui URL, reading the
// endpoint bodies (the real History Server samples and malformed ones), and the diff across polls.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "listener/rest/rest_date.h"
#include "listener/rest/rest_event_differ.h"
#include "listener/rest/rest_json.h"
#include "listener/rest/spark_ui_endpoint.h"
#include "tests/unit/listener/rest/listener_rest_test_data.h"

namespace sparktrace::listener::rest {
namespace {

TEST(ListenerRestDate, ParsesSparkRestDates) {
  EXPECT_EQ(ParseRestDate("2015-02-03T16:42:59.720GMT"), 1422981779720);
  EXPECT_EQ(ParseRestDate("1970-01-01T00:00:00.000GMT"), 0);
  EXPECT_EQ(ParseRestDate("2020-02-29T23:59:59.999GMT"), 1583020799999);
  EXPECT_EQ(ParseRestDate("2022-01-13T02:04:10.519Z"), 1642039450519);
}

TEST(ListenerRestDate, RejectsAnythingElse) {
  for (const char* text :
       {"", "2015-02-03", "2015-02-03T16:42:59GMT", "2015-02-03T16:42:59.720", "2015-02-03T16:42:59.720UTC",
        "2015-02-03 16:42:59.720GMT", "2015-13-03T16:42:59.720GMT", "2015-02-29T16:42:59.720GMT",
        "2015-02-03T24:00:00.000GMT", "1969-12-31T23:59:59.999GMT", "2015-02-0xT16:42:59.720GMT",
        "2015-02-03T16:42:59.720GMTX"}) {
    EXPECT_EQ(ParseRestDate(text), std::nullopt) << text;
  }
}

TEST(ListenerRestUrl, AcceptsHostPortAndPrefix) {
  auto plain = ParseSparkUiUrl("http://driver:4040");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->host, "driver");
  EXPECT_EQ(plain->port, 4040);
  EXPECT_EQ(plain->path_prefix, "");

  auto prefixed = ParseSparkUiUrl("http://[::1]:18080/proxy/app-1/api/v1/");
  ASSERT_TRUE(prefixed.ok()) << prefixed.error().message;
  EXPECT_EQ(prefixed->host, "::1");
  EXPECT_EQ(prefixed->path_prefix, "/proxy/app-1");
  EXPECT_EQ(prefixed->Authority(), "[::1]:18080");

  auto default_port = ParseSparkUiUrl("http://spark-ui/");
  ASSERT_TRUE(default_port.ok());
  EXPECT_EQ(default_port->port, 80);
}

TEST(ListenerRestUrl, RejectsWithAMessage) {
  struct Case {
    const char* url;
    const char* says;
  };
  for (const Case& c : {Case{"https://driver:4040", "https is not supported"},
                        Case{"driver:4040", "expected http://"}, Case{"http://:4040", "missing host"},
                        Case{"http://driver:0", "port must be"}, Case{"http://driver:70000", "port must be"},
                        Case{"http://driver:", "empty port"}, Case{"http://u:p@driver", "user info"},
                        Case{"http://driver/?x=1", "query string"}, Case{"http://[::1", "unclosed"}}) {
    auto parsed = ParseSparkUiUrl(c.url);
    ASSERT_FALSE(parsed.ok()) << c.url;
    EXPECT_NE(parsed.error().message.find(c.says), std::string::npos) << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("--spark-ui"), std::string::npos);
  }
}

class ListenerRestJson : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = test::FindRestApiDir();
    if (!directory) GTEST_SKIP() << test::RestApiDirMissingMessage();
    directory_ = *directory;
  }
  std::string Sample(const std::string& name) const { return test::ReadRestSample(directory_, name); }

  std::filesystem::path directory_;
  RestJsonReader reader_;
};

TEST_F(ListenerRestJson, ReadsTheApplicationList) {
  auto apps = reader_.Applications(Sample("application_list_json_expectation.json"));
  ASSERT_TRUE(apps.ok()) << apps.error().message;
  ASSERT_EQ(apps->size(), 16u);
  EXPECT_EQ((*apps)[0].id, "local-1642039451826");
  EXPECT_EQ((*apps)[0].spark_version, "3.3.0-SNAPSHOT");
  EXPECT_EQ((*apps)[0].start_time_ms, 1642039450519);
  EXPECT_EQ((*apps)[0].end_time_ms, 1642039536564);
  EXPECT_TRUE((*apps)[0].completed);
  EXPECT_EQ((*apps)[0].spark_user, "lijunqing");
  bool found_attempt = false;
  for (const RestApplication& app : *apps) found_attempt = found_attempt || app.attempt_id.has_value();
  EXPECT_TRUE(found_attempt) << "the multi-attempt applications list attemptId";
}

TEST_F(ListenerRestJson, ReadsJobsWithTagsAndStatus) {
  auto jobs = reader_.Jobs(Sample("job_list_json_expectation.json"));
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[1].job_id, 1);
  EXPECT_EQ((*jobs)[1].status, RestJobStatus::kFailed);
  EXPECT_EQ((*jobs)[1].stage_ids, (std::vector<std::int32_t>{1, 2}));
  EXPECT_TRUE((*jobs)[1].job_tags.empty());
  EXPECT_EQ((*jobs)[1].submission_time_ms, std::nullopt) << "Spark 1.2-era jobs have no submission time";
}

TEST_F(ListenerRestJson, ReadsStagesWithTaskMetricSums) {
  auto stages = reader_.Stages(Sample("stage_list_json_expectation.json"));
  ASSERT_TRUE(stages.ok()) << stages.error().message;
  ASSERT_EQ(stages->size(), 4u);
  const RestStage& failed = (*stages)[1];
  EXPECT_EQ(failed.stage_id, 2);
  EXPECT_EQ(failed.status, RestStageStatus::kFailed);
  EXPECT_EQ(failed.num_failed_tasks, 1);
  ASSERT_TRUE(failed.failure_reason.has_value());
  EXPECT_TRUE(failed.failure_reason->starts_with("Job aborted due to stage failure: Task 3 in stage 2.0"));
  const RestStage& shuffle_map = (*stages)[2];
  EXPECT_EQ(shuffle_map.stage_id, 1);
  EXPECT_EQ(shuffle_map.submission_time_ms, 1422981785829);
  EXPECT_EQ(shuffle_map.completion_time_ms, 1422981786286);
  EXPECT_EQ(shuffle_map.task_metrics_sum.executor_run_time_ms, 3476);
  EXPECT_EQ(shuffle_map.task_metrics_sum.jvm_gc_time_ms, 152);
  EXPECT_EQ(shuffle_map.task_metrics_sum.input_bytes_read, 28000128);
  EXPECT_EQ(shuffle_map.task_metrics_sum.shuffle_bytes_written, 13180);
  EXPECT_EQ(shuffle_map.task_metrics_sum.shuffle_write_time_ns, 692000);

  auto peaks = reader_.Stages(Sample("stage_list_with_peak_metrics_expectation.json"));
  ASSERT_TRUE(peaks.ok()) << peaks.error().message;
  ASSERT_EQ(peaks->size(), 3u);
  EXPECT_EQ((*peaks)[0].task_metrics_sum.executor_cpu_time_ns, 8810338000);
  EXPECT_EQ((*peaks)[0].task_metrics_sum.peak_execution_memory_bytes, 384640);
}

TEST_F(ListenerRestJson, ReadsExecutors) {
  auto executors = reader_.Executors(Sample("executor_list_with_executor_metrics_json_expectation.json"));
  ASSERT_TRUE(executors.ok()) << executors.error().message;
  ASSERT_EQ(executors->size(), 4u);
  EXPECT_EQ((*executors)[1].executor_id, "3");
  EXPECT_EQ((*executors)[1].host, "test-3.vpc.company.com");
  EXPECT_EQ((*executors)[1].total_cores, 1);
  EXPECT_EQ((*executors)[1].add_time_ms, 1554755995362);
  EXPECT_TRUE((*executors)[1].active);
}

TEST(ListenerRestJsonMalformed, FailsWholeBodyNamingTheField) {
  RestJsonReader reader;
  struct Case {
    const char* body;
    const char* says;
  };
  for (const Case& c :
       {Case{"", "jobs: not JSON"}, Case{"[{", "jobs: not JSON"}, Case{"{}", "expected a JSON array"},
        Case{"[1]", "jobs[0]: not an object"}, Case{"[{}]", "jobs[0].jobId: missing"},
        Case{R"([{"jobId":"7"}])", "jobs[0].jobId: not an integer"},
        Case{R"([{"jobId":1.5}])", "jobs[0].jobId: not an integer"},
        Case{R"([{"jobId":3000000000}])", "jobs[0].jobId: not an integer in range"},
        Case{R"([{"jobId":1,"jobTags":"a,b"}])", "jobs[0].jobTags: not an array"},
        Case{R"([{"jobId":1,"submissionTime":"yesterday"}])", "jobs[0].submissionTime: not a date"}}) {
    auto jobs = reader.Jobs(c.body);
    ASSERT_FALSE(jobs.ok()) << c.body;
    EXPECT_NE(jobs.error().message.find(c.says), std::string::npos)
        << c.body << " → " << jobs.error().message;
  }
  auto apps = reader.Applications(R"([{"id":"a","attempts":[{"completed":"yes"}]}])");
  ASSERT_FALSE(apps.ok());
  EXPECT_NE(apps.error().message.find("applications[0].attempts[0].completed: not a boolean"),
            std::string::npos)
      << apps.error().message;
  // Null and absent optional fields are the same; a running attempt's placeholder end is no end.
  auto running = reader.Applications(
      R"([{"id":"a","name":null,"attempts":[{"completed":false,"endTime":"1969-12-31T23:59:59.999GMT","endTimeEpoch":-1}]}])");
  ASSERT_TRUE(running.ok()) << running.error().message;
  EXPECT_EQ((*running)[0].end_time_ms, std::nullopt);
}

// ---- the diff, without HTTP ----

RestApplication RunningApp() {
  RestApplication app;
  app.id = "app-1";
  app.name = "connect";
  app.start_time_ms = 1000;
  return app;
}

RestJob Job(std::int32_t id, RestJobStatus status, std::vector<std::int32_t> stage_ids) {
  RestJob job;
  job.job_id = id;
  job.status = status;
  job.stage_ids = std::move(stage_ids);
  return job;
}

RestStage Stage(std::int32_t id, RestStageStatus status) {
  RestStage stage;
  stage.stage_id = id;
  stage.status = status;
  stage.num_tasks = 4;
  return stage;
}

using test::Names;

using Strings = std::vector<std::string>;

TEST(ListenerRestDiffer, StageWaitsForItsJobAndJobEndFollowsItsStages) {
  RestEventDiffer differ;
  std::vector<RestEvent> events;
  // Poll 1: the stage list already shows job 1's stage, the (older) job list not yet job 1.
  differ.Observe({RunningApp(), std::vector<RestJob>{},
                  std::vector<RestStage>{Stage(0, RestStageStatus::kActive)}, std::vector<RestExecutor>{}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"ApplicationStart"}));
  events.clear();
  // Poll 2: the job is there and already done, but the stage list failed: JobEnd must wait.
  differ.Observe({RunningApp(), std::vector<RestJob>{Job(1, RestJobStatus::kSucceeded, {0})}, std::nullopt,
                  std::vector<RestExecutor>{}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"JobStart"}));
  events.clear();
  // Poll 3: everything came through.
  differ.Observe({RunningApp(), std::vector<RestJob>{Job(1, RestJobStatus::kSucceeded, {0})},
                  std::vector<RestStage>{Stage(0, RestStageStatus::kComplete)}, std::vector<RestExecutor>{}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"StageSubmitted", "StageCompleted", "JobEnd"}));
  ASSERT_TRUE(events[1].stage_task_metrics_sum.has_value());
  events.clear();
  differ.Observe({RunningApp(), std::vector<RestJob>{Job(1, RestJobStatus::kSucceeded, {0})},
                  std::vector<RestStage>{Stage(0, RestStageStatus::kComplete)}, std::vector<RestExecutor>{}},
                 events);
  EXPECT_TRUE(events.empty());
}

TEST(ListenerRestDiffer, PendingAndSkippedStagesAreNeverSubmitted) {
  RestEventDiffer differ;
  std::vector<RestEvent> events;
  differ.Observe(
      {RunningApp(), std::vector<RestJob>{Job(1, RestJobStatus::kRunning, {0, 1, 2})},
       std::vector<RestStage>{Stage(0, RestStageStatus::kSkipped), Stage(1, RestStageStatus::kPending),
                              Stage(2, RestStageStatus::kActive)},
       std::vector<RestExecutor>{}},
      events);
  EXPECT_EQ(Names(events), (Strings{"ApplicationStart", "JobStart", "StageSubmitted"}));
  EXPECT_EQ(std::get<events::StageSubmitted>(events[2].event).stage.stage_id, 2);
}

TEST(ListenerRestDiffer, ForgetsWhatSparkNoLongerRetainsAndCountsUnfinishedJobs) {
  RestEventDiffer differ;
  std::vector<RestEvent> events;
  differ.Observe(
      {RunningApp(),
       std::vector<RestJob>{Job(1, RestJobStatus::kSucceeded, {}), Job(2, RestJobStatus::kRunning, {})},
       std::vector<RestStage>{}, std::vector<RestExecutor>{}},
      events);
  events.clear();
  differ.Observe({RunningApp(), std::vector<RestJob>{Job(3, RestJobStatus::kRunning, {})},
                  std::vector<RestStage>{}, std::vector<RestExecutor>{}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"JobStart"}));
  EXPECT_EQ(differ.jobs_lost(), 1u) << "job 2 dropped out before it was seen to end";
}

TEST(ListenerRestDiffer, ExecutorsComeAndGoOnceAndClusterDriverIsNotAnExecutor) {
  RestExecutor driver;
  driver.executor_id = "driver";
  RestExecutor worker;
  worker.executor_id = "1";
  worker.host = "node-1";
  worker.total_cores = 4;
  worker.add_time_ms = 2000;
  RestEventDiffer differ;
  std::vector<RestEvent> events;
  differ.Observe({RunningApp(), std::vector<RestJob>{}, std::vector<RestStage>{},
                  std::vector<RestExecutor>{driver, worker}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"ApplicationStart", "ExecutorAdded"}));
  events.clear();
  worker.active = false;
  worker.remove_time_ms = 3000;
  worker.remove_reason = "idle";
  for (int poll = 0; poll < 2; ++poll) {
    differ.Observe({RunningApp(), std::vector<RestJob>{}, std::vector<RestStage>{},
                    std::vector<RestExecutor>{driver, worker}},
                   events);
  }
  ASSERT_EQ(Names(events), (Strings{"ExecutorRemoved"}));
  const auto& removed = std::get<events::ExecutorRemoved>(events[0].event);
  EXPECT_EQ(removed.time_ms, 3000);
  EXPECT_EQ(removed.reason, "idle");
}

TEST(ListenerRestDiffer, ApplicationEndWaitsForAPollWhereEveryListCameThrough) {
  RestApplication app = RunningApp();
  app.completed = true;
  app.end_time_ms = 9000;
  RestEventDiffer differ;
  std::vector<RestEvent> events;
  differ.Observe({app, std::vector<RestJob>{}, std::nullopt, std::vector<RestExecutor>{}}, events);
  EXPECT_EQ(Names(events), (Strings{"ApplicationStart"}));
  EXPECT_FALSE(differ.ended());
  events.clear();
  differ.Observe({app, std::vector<RestJob>{}, std::vector<RestStage>{}, std::vector<RestExecutor>{}},
                 events);
  EXPECT_EQ(Names(events), (Strings{"ApplicationEnd"}));
  EXPECT_EQ(std::get<events::ApplicationEnd>(events[0].event).time_ms, 9000);
  EXPECT_TRUE(differ.ended());
}

}  // namespace
}  // namespace sparktrace::listener::rest
