// The REST feed against a local HTTP server serving the real History Server samples
// (shared/data/rest-api) at the paths the poller requests: what comes out on the first poll, that an
// unchanged server gives nothing, that a change gives exactly its events, and that every kind of
// failure is a counted error with a clear message.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "listener/rest/rest_poller.h"
#include "tests/unit/listener/rest/listener_rest_test_data.h"
#include "tests/unit/listener/rest/listener_rest_test_server.h"

namespace sparktrace::listener::rest {
namespace {

constexpr char kApp[] = "local-1422981780767";
const std::string kAppPath = std::string("/api/v1/applications/") + kApp;

using Strings = std::vector<std::string>;

using test::Names;

template <typename Event>
std::vector<const Event*> All(const std::vector<RestEvent>& events) {
  std::vector<const Event*> found;
  for (const RestEvent& event : events) {
    if (const auto* typed = std::get_if<Event>(&event.event)) found.push_back(typed);
  }
  return found;
}

class ListenerRestPoller : public ::testing::Test {
 protected:
  void SetUp() override {
    auto directory = test::FindRestApiDir();
    if (!directory) GTEST_SKIP() << test::RestApiDirMissingMessage();
    directory_ = *directory;
    ASSERT_NE(server_.port(), 0) << "test server did not start";
  }

  std::string Sample(const std::string& name) const { return test::ReadRestSample(directory_, name); }

  // The samples of local-1422981780767 (3 jobs, one failed; 4 stages, one failed; the driver).
  void ServeCompletedApplication() {
    server_.Set("/api/v1/applications", Sample("application_list_json_expectation.json"));
    server_.Set(kAppPath + "/jobs", Sample("job_list_json_expectation.json"));
    server_.Set(kAppPath + "/stages", Sample("stage_list_json_expectation.json"));
    server_.Set(kAppPath + "/allexecutors", Sample("executor_list_json_expectation.json"));
  }

  std::unique_ptr<RestPoller> MakePoller(std::string url, std::size_t max_response_bytes = 32u << 20,
                                         std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    RestPollerOptions options;
    options.spark_ui_url = std::move(url);
    options.application_id = kApp;
    options.max_response_bytes = max_response_bytes;
    options.request_timeout = timeout;
    auto poller = RestPoller::Create(std::move(options));
    EXPECT_TRUE(poller.ok()) << poller.error().message;
    return poller.ok() ? std::move(poller).value() : nullptr;
  }

  std::filesystem::path directory_;
  test::TestHttpServer server_;
};

TEST_F(ListenerRestPoller, FirstPollTellsTheWholeApplicationFromTheSamples) {
  ServeCompletedApplication();
  auto poller = MakePoller(server_.url());
  ASSERT_NE(poller, nullptr);
  const RestPollResult result = poller->Poll();
  for (const Error& error : result.errors) ADD_FAILURE() << error.message;

  // The driver of this local-mode 1.2 app has no cores: like its event log, no ExecutorAdded.
  EXPECT_EQ(Names(result.events),
            (Strings{"ApplicationStart", "JobStart", "JobStart", "JobStart", "StageSubmitted",
                     "StageSubmitted", "StageSubmitted", "StageSubmitted", "StageCompleted", "StageCompleted",
                     "StageCompleted", "StageCompleted", "JobEnd", "JobEnd", "JobEnd", "ApplicationEnd"}));
  for (const RestEvent& event : result.events) EXPECT_EQ(event.application_id, kApp);

  const auto& start = std::get<events::ApplicationStart>(result.events.front().event);
  EXPECT_EQ(start.app_id, kApp);
  EXPECT_EQ(start.app_name, "Spark shell");
  EXPECT_EQ(start.spark_user, "irashid");
  EXPECT_EQ(start.time_ms, 1422981779720);
  EXPECT_EQ(std::get<events::ApplicationEnd>(result.events.back().event).time_ms, 1422981788731);

  const auto job_starts = All<events::JobStart>(result.events);
  ASSERT_EQ(job_starts.size(), 3u);
  EXPECT_EQ(job_starts[1]->job_id, 1);
  EXPECT_EQ(job_starts[1]->stage_ids, (std::vector<std::int32_t>{1, 2}));
  EXPECT_TRUE(job_starts[1]->properties.job_tags.empty());

  const auto completed = All<events::StageCompleted>(result.events);
  ASSERT_EQ(completed.size(), 4u);
  EXPECT_EQ(completed[1]->stage.stage_id, 1);
  EXPECT_EQ(completed[1]->stage.num_tasks, 8);
  EXPECT_EQ(completed[1]->stage.submission_time_ms, 1422981785829);
  EXPECT_EQ(completed[1]->stage.completion_time_ms, 1422981786286);
  EXPECT_EQ(completed[1]->stage.failure_reason, std::nullopt);
  ASSERT_TRUE(completed[2]->stage.failure_reason.has_value());
  EXPECT_TRUE(completed[2]->stage.failure_reason->starts_with("Job aborted due to stage failure"));
  // The task-metric sums ride along with StageCompleted.
  const RestEvent& stage_1 = result.events[9];
  ASSERT_TRUE(stage_1.stage_task_metrics_sum.has_value());
  EXPECT_EQ(stage_1.stage_task_metrics_sum->shuffle_bytes_written, 13180);
  EXPECT_EQ(stage_1.stage_task_metrics_sum->executor_run_time_ms, 3476);

  const auto job_ends = All<events::JobEnd>(result.events);
  ASSERT_EQ(job_ends.size(), 3u);
  EXPECT_EQ(job_ends[0]->result, events::JobResult::kSucceeded);
  EXPECT_EQ(job_ends[1]->result, events::JobResult::kFailed);
  EXPECT_TRUE(
      job_ends[1]->failure_message.starts_with("Job aborted due to stage failure: Task 3 in stage 2.0"));
  EXPECT_TRUE(job_ends[1]->failure_message.size() <= events::kMaxMessageBytes);

  EXPECT_EQ(server_.requests(), (Strings{"/api/v1/applications", kAppPath + "/jobs", kAppPath + "/stages",
                                         kAppPath + "/allexecutors"}));
  EXPECT_EQ(poller->counters().events, 16u);
  EXPECT_EQ(poller->counters().errors(), 0u);

  // Ended: the next poll asks only for the application list, and says nothing.
  const RestPollResult again = poller->Poll();
  EXPECT_TRUE(again.events.empty());
  EXPECT_TRUE(again.errors.empty());
  EXPECT_EQ(server_.requests().size(), 5u);
}

TEST_F(ListenerRestPoller, ExecutorsOfAClusterApplication) {
  server_.Set("/api/v1/applications", Sample("application_list_json_expectation.json"));
  const std::string app_path = "/api/v1/applications/application_1553914137147_0018";
  server_.Set(app_path + "/jobs", "[]");
  server_.Set(app_path + "/stages", "[]");
  server_.Set(app_path + "/allexecutors",
              Sample("executor_list_with_executor_metrics_json_expectation.json"));
  RestPollerOptions options;
  options.spark_ui_url = server_.url();
  options.application_id = "application_1553914137147_0018";
  auto poller = RestPoller::Create(options);
  ASSERT_TRUE(poller.ok()) << poller.error().message;
  const RestPollResult result = (*poller)->Poll();
  EXPECT_TRUE(result.errors.empty());
  const auto added = All<events::ExecutorAdded>(result.events);
  ASSERT_EQ(added.size(), 3u) << "executors 1, 2, 3; not the cluster-mode driver";
  EXPECT_EQ(added[0]->executor_id, "3");
  EXPECT_EQ(added[0]->host, "test-3.vpc.company.com");
  EXPECT_EQ(added[0]->total_cores, 1);
  EXPECT_EQ(added[0]->time_ms, 1554755995362);
  EXPECT_EQ(Names(result.events).back(), "ApplicationEnd");
}

TEST_F(ListenerRestPoller, AttemptIdGoesIntoThePathsAndTheEvents) {
  // local-1426533911241 lists attempts "2" (newest) and "1".
  server_.Set("/api/v1/applications", Sample("application_list_json_expectation.json"));
  const std::string attempt_path = "/api/v1/applications/local-1426533911241/2";
  server_.Set(attempt_path + "/jobs", "[]");
  server_.Set(attempt_path + "/stages", "[]");
  server_.Set(attempt_path + "/allexecutors", "[]");
  RestPollerOptions options;
  options.spark_ui_url = server_.url();
  options.application_id = "local-1426533911241";
  auto poller = RestPoller::Create(options);
  ASSERT_TRUE(poller.ok()) << poller.error().message;
  const RestPollResult result = (*poller)->Poll();
  for (const Error& error : result.errors) ADD_FAILURE() << error.message;
  ASSERT_EQ(Names(result.events), (Strings{"ApplicationStart", "ApplicationEnd"}));
  EXPECT_EQ(result.events[0].attempt_id, "2");
  EXPECT_EQ(std::get<events::ApplicationStart>(result.events[0].event).attempt_id, "2");
  EXPECT_EQ(std::get<events::ApplicationStart>(result.events[0].event).time_ms, 1426633910242);
}

TEST_F(ListenerRestPoller, AChangeGivesExactlyItsEventsOnce) {
  // The same application while it runs: job 2 (tagged by a Connect operation) and its stage 3 active.
  const std::string running_app = "[" +
                                  test::ReplaceFirst(Sample("one_app_json_expectation.json"),
                                                     "\"completed\" : true", "\"completed\" : false") +
                                  "]";
  const std::string tag =
      "SparkConnect_OperationTag_User_etl_Session_6f1e1f3c-6d0e-4c61-9a57-1f2b3c4d5e6f_Operation_"
      "0b7d2c4e-8a1f-4e2b-9c3d-5e6f7a8b9c0d";
  const std::string done_jobs = test::ReplaceFirst(Sample("job_list_json_expectation.json"),
                                                   "\"jobTags\" : [ ]", "\"jobTags\" : [ \"" + tag + "\" ]");
  const std::string running_jobs =
      test::ReplaceFirst(done_jobs, "\"status\" : \"SUCCEEDED\"", "\"status\" : \"RUNNING\"");
  const std::string done_stages = Sample("stage_list_json_expectation.json");
  const std::string running_stages =
      test::ReplaceFirst(done_stages, "\"status\" : \"COMPLETE\"", "\"status\" : \"ACTIVE\"");
  ASSERT_FALSE(running_app.size() < 3 || running_jobs.empty() || running_stages.empty())
      << "samples changed shape";

  server_.Set("/api/v1/applications", running_app);
  server_.Set(kAppPath + "/jobs", running_jobs);
  server_.Set(kAppPath + "/stages", running_stages);
  server_.Set(kAppPath + "/allexecutors", Sample("executor_list_json_expectation.json"));
  auto poller = MakePoller(server_.url());
  ASSERT_NE(poller, nullptr);

  const RestPollResult first = poller->Poll();
  EXPECT_TRUE(first.errors.empty());
  EXPECT_EQ(All<events::JobEnd>(first.events).size(), 2u) << "jobs 0 and 1 only";
  EXPECT_EQ(All<events::StageCompleted>(first.events).size(), 3u) << "stages 0, 1, 2 only";
  EXPECT_EQ(All<events::StageSubmitted>(first.events).size(), 4u);
  const auto job_starts = All<events::JobStart>(first.events);
  ASSERT_EQ(job_starts.size(), 3u);
  EXPECT_EQ(job_starts[2]->job_id, 2);
  EXPECT_EQ(job_starts[2]->properties.job_tags, (Strings{tag}));

  const RestPollResult unchanged = poller->Poll();
  EXPECT_TRUE(unchanged.events.empty()) << ::testing::PrintToString(Names(unchanged.events));
  EXPECT_TRUE(unchanged.errors.empty());

  // Job 2 completes.
  server_.Set(kAppPath + "/jobs", done_jobs);
  server_.Set(kAppPath + "/stages", done_stages);
  const RestPollResult completed = poller->Poll();
  ASSERT_EQ(Names(completed.events), (Strings{"StageCompleted", "JobEnd"}));
  EXPECT_EQ(std::get<events::StageCompleted>(completed.events[0].event).stage.stage_id, 3);
  EXPECT_EQ(std::get<events::StageCompleted>(completed.events[0].event).stage.completion_time_ms,
            1422981787226);
  EXPECT_EQ(std::get<events::JobEnd>(completed.events[1].event).job_id, 2);
  EXPECT_EQ(std::get<events::JobEnd>(completed.events[1].event).result, events::JobResult::kSucceeded);

  // The application ends.
  server_.Set("/api/v1/applications", "[" + Sample("one_app_json_expectation.json") + "]");
  const RestPollResult ended = poller->Poll();
  ASSERT_EQ(Names(ended.events), (Strings{"ApplicationEnd"}));
  EXPECT_TRUE(poller->Poll().events.empty());
  EXPECT_EQ(poller->counters().errors(), 0u);
  EXPECT_EQ(poller->counters().polls, 5u);
}

TEST_F(ListenerRestPoller, UnreachableServerIsACountedError) {
  const std::uint16_t port = test::UnusedLoopbackPort();
  ASSERT_NE(port, 0);
  auto poller = MakePoller("http://127.0.0.1:" + std::to_string(port));
  ASSERT_NE(poller, nullptr);
  const RestPollResult result = poller->Poll();
  EXPECT_TRUE(result.events.empty());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(
      result.errors[0].message.find("GET http://127.0.0.1:" + std::to_string(port) + "/api/v1/applications"),
      std::string::npos)
      << result.errors[0].message;
  EXPECT_NE(result.errors[0].message.find("could not connect"), std::string::npos)
      << result.errors[0].message;
  EXPECT_EQ(poller->counters().unreachable, 1u);
  EXPECT_EQ(poller->counters().errors(), 1u);
}

TEST_F(ListenerRestPoller, ServerErrorIsACountedErrorAndTheNextPollRecovers) {
  ServeCompletedApplication();
  server_.Set("/api/v1/applications", test::TestResponse{500, "<html>boom\n</html>", false, false});
  auto poller = MakePoller(server_.url());
  ASSERT_NE(poller, nullptr);
  const RestPollResult failed = poller->Poll();
  EXPECT_TRUE(failed.events.empty());
  ASSERT_EQ(failed.errors.size(), 1u);
  EXPECT_NE(failed.errors[0].message.find("/api/v1/applications: HTTP 500: <html>boom </html>"),
            std::string::npos)
      << failed.errors[0].message;
  EXPECT_EQ(poller->counters().http_errors, 1u);

  server_.Set("/api/v1/applications", Sample("application_list_json_expectation.json"));
  EXPECT_EQ(poller->Poll().events.size(), 16u);
}

TEST_F(ListenerRestPoller, MalformedJsonIsACountedErrorAndHoldsBackOnlyWhatItWouldHaveSaid) {
  ServeCompletedApplication();
  server_.Set(kAppPath + "/jobs", "[{\"jobId\" : 2, \"status\" : ");
  auto poller = MakePoller(server_.url());
  ASSERT_NE(poller, nullptr);
  const RestPollResult first = poller->Poll();
  ASSERT_EQ(first.errors.size(), 1u);
  EXPECT_NE(first.errors[0].message.find(kAppPath + "/jobs: jobs: not JSON"), std::string::npos)
      << first.errors[0].message;
  EXPECT_EQ(poller->counters().bad_json, 1u);
  // No jobs known: stages wait for them, and the application does not end yet.
  EXPECT_EQ(Names(first.events), (Strings{"ApplicationStart"}));

  server_.Set(kAppPath + "/jobs", "{\"jobs\" : []}");
  const RestPollResult second = poller->Poll();
  ASSERT_EQ(second.errors.size(), 1u);
  EXPECT_NE(second.errors[0].message.find("expected a JSON array"), std::string::npos)
      << second.errors[0].message;
  EXPECT_EQ(poller->counters().bad_json, 2u);

  server_.Set(kAppPath + "/jobs", Sample("job_list_json_expectation.json"));
  const RestPollResult fixed = poller->Poll();
  EXPECT_TRUE(fixed.errors.empty());
  EXPECT_EQ(fixed.events.size(), 15u) << "everything but the ApplicationStart already sent";
}

TEST_F(ListenerRestPoller, OversizedBodyIsACountedError) {
  ServeCompletedApplication();
  auto poller = MakePoller(server_.url(), /*max_response_bytes=*/1024);
  ASSERT_NE(poller, nullptr);
  const RestPollResult result = poller->Poll();  // the application list is 7.6 KB
  EXPECT_TRUE(result.events.empty());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].message.find("response body larger than 1024 bytes"), std::string::npos)
      << result.errors[0].message;
  EXPECT_EQ(poller->counters().too_large, 1u);
}

TEST_F(ListenerRestPoller, BodyWithoutContentLengthIsReadToTheEndAndCapped) {
  ServeCompletedApplication();
  server_.Set("/api/v1/applications",
              test::TestResponse{200, Sample("application_list_json_expectation.json"), false,
                                 /*close_delimited=*/true});
  auto poller = MakePoller(server_.url());
  ASSERT_NE(poller, nullptr);
  const RestPollResult whole = poller->Poll();
  EXPECT_TRUE(whole.errors.empty());
  EXPECT_EQ(whole.events.size(), 16u);

  auto capped = MakePoller(server_.url(), /*max_response_bytes=*/1024);
  ASSERT_NE(capped, nullptr);
  const RestPollResult refused = capped->Poll();
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_NE(refused.errors[0].message.find("larger than 1024 bytes"), std::string::npos)
      << refused.errors[0].message;
  EXPECT_EQ(capped->counters().too_large, 1u);
}

TEST_F(ListenerRestPoller, SilentServerTimesOut) {
  ServeCompletedApplication();
  server_.Set(kAppPath + "/stages", test::TestResponse{200, "", /*never_answer=*/true, false});
  auto poller = MakePoller(server_.url(), 32u << 20, std::chrono::milliseconds(300));
  ASSERT_NE(poller, nullptr);
  const RestPollResult result = poller->Poll();
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].message.find("/stages: timed out after 300 ms"), std::string::npos)
      << result.errors[0].message;
  EXPECT_EQ(poller->counters().timed_out, 1u);
  // Jobs came through; their JobEnds and the ApplicationEnd wait for a stage list.
  EXPECT_EQ(Names(result.events), (Strings{"ApplicationStart", "JobStart", "JobStart", "JobStart"}));
}

TEST(ListenerRestPollerConfig, RejectsBadOptions) {
  RestPollerOptions options;
  options.spark_ui_url = "https://driver:4040";
  auto https = RestPoller::Create(options);
  ASSERT_FALSE(https.ok());
  EXPECT_NE(https.error().message.find("https is not supported"), std::string::npos);
  options.spark_ui_url = "http://driver:4040";
  options.request_timeout = std::chrono::milliseconds(0);
  EXPECT_FALSE(RestPoller::Create(options).ok());
}

}  // namespace
}  // namespace sparktrace::listener::rest
