// Every line of every real event log in shared/data parses, or is reported as ignored or
// malformed, and the events add up to the figures of shared/data/README.md and README-rapids.md
// (jobs = distinct JobStart ids; stage attempts = distinct (stage, attempt) of StageSubmitted and
// StageCompleted; tasks = TaskEnd events; executors = ExecutorAdded / ExecutorRemoved events).
#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::events {
namespace {

struct LogFigures {
  std::string name;                // as in the README tables, under shared/data
  std::vector<std::string> parts;  // files to concatenate, in order; empty: `name` itself
  std::size_t lines = 0;
  std::size_t malformed_lines = 0;
  std::size_t jobs = 0;
  std::size_t stage_attempts = 0;
  std::size_t tasks = 0;
  std::size_t executors_added = 0;
  std::size_t executors_removed = 0;
  std::size_t non_success_task_ends = 0;
  std::size_t failed_jobs = 0;
  std::size_t failed_stages = 0;
  bool application_end = true;
};

const std::vector<LogFigures>& AllLogs() {
  static const std::vector<LogFigures> logs = {
      // shared/data/README.md: apache/spark test resources.
      {"spark-events/app-20161115172038-0000", {}, 75, 0, 1, 1, 26, 4, 0, 10, 0, 0, true},
      {"spark-events/app-20161116163331-0000", {}, 68, 0, 1, 1, 24, 4, 0, 8, 0, 0, true},
      {"spark-events/app-20180109111548-0000", {}, 59, 0, 1, 2, 22, 2, 0, 2, 0, 0, true},
      {"spark-events/app-20200706201101-0003", {}, 124, 0, 3, 3, 48, 1, 0, 0, 0, 0, true},
      {"spark-events/application_1516285256255_0012", {}, 71, 0, 1, 2, 24, 5, 0, 4, 0, 0, true},
      {"spark-events/application_1553914137147_0018", {}, 44, 0, 3, 3, 6, 3, 0, 0, 0, 0, true},
      {"spark-events/application_1555004656427_0144", {}, 10, 0, 0, 0, 0, 2, 0, 0, 0, 0, true},
      {"spark-events/application_1578436911597_0052", {}, 27, 0, 1, 1, 6, 1, 0, 0, 0, 0, true},
      {"spark-events/application_1628109047826_1317105", {}, 52, 0, 1, 1, 5, 10, 6, 1, 0, 0, true},
      {"spark-events/local-1422981759269", {}, 88, 0, 4, 5, 33, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1422981780767", {}, 82, 0, 3, 4, 32, 0, 0, 1, 1, 1, true},
      {"spark-events/local-1425081759269", {}, 88, 0, 4, 5, 33, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1426533911241", {}, 24, 0, 1, 1, 8, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1426633911242", {}, 24, 0, 1, 1, 8, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1430917381534", {}, 231, 0, 1, 2, 110, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1430917381535_1", {}, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1430917381535_2", {}, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, true},
      {"spark-events/local-1596020211915", {}, 160, 0, 8, 16, 24, 1, 0, 0, 0, 0, true},
      {"spark-events/local-1642039451826", {}, 115, 0, 6, 6, 35, 1, 0, 0, 0, 0, true},
      {"spark-events-broken/last-attempt-incomplete/application_1656321732247_0006_1",
       {},
       10,
       0,
       0,
       0,
       0,
       2,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-broken/last-attempt-incomplete/application_1656321732247_0006_2",
       {},
       9,
       0,
       0,
       0,
       0,
       2,
       0,
       0,
       0,
       0,
       false},
      {"spark-events-broken/previous-attempt-incomplete/application_1656321732247_0006_1",
       {},
       9,
       0,
       0,
       0,
       0,
       2,
       0,
       0,
       0,
       0,
       false},
      {"spark-events-broken/previous-attempt-incomplete/application_1656321732247_0006_2",
       {},
       10,
       0,
       0,
       0,
       0,
       2,
       0,
       0,
       0,
       0,
       true},
      // shared/data/README-rapids.md: NVIDIA/spark-rapids-tools test resources.
      {"spark-events-problems/tasks_executors_fail_compressed_eventlog.zstd",
       {},
       17717,
       0,
       75,
       135,
       8630,
       8,
       2,
       53,
       1,
       1,
       true},
      {"spark-events-problems/gpu_oom_eventlog.zstd", {}, 25084, 0, 37, 37, 12416, 2, 0, 113, 5, 5, true},
      {"spark-events-problems/complex_dec_eventlog.zstd", {}, 187, 0, 21, 21, 36, 1, 0, 1, 1, 1, true},
      {"spark-events-problems/eventlog_4nodes_8cores_dynamic_alloc.zstd",
       {},
       665,
       0,
       20,
       20,
       235,
       15,
       14,
       0,
       0,
       0,
       true},
      {"spark-events-problems/malformed_json_eventlog.zstd", {}, 477, 1, 2, 5, 217, 9, 1, 0, 0, 0, true},
      {"spark-events-problems/aqeshuffle_eventlog.zstd", {}, 85, 0, 4, 4, 26, 1, 0, 0, 0, 0, true},
      {"spark-events-problems/truncated_eventlog", {}, 62, 0, 2, 3, 21, 1, 0, 0, 0, 0, false},
      {"spark-events-problems/join_missing_sql_end", {}, 443, 0, 1, 4, 213, 1, 0, 0, 0, 0, true},
      {"spark-events-problems/nds_q66_gpu.zstd", {}, 26214, 0, 37, 41, 12987, 8, 0, 0, 0, 0, true},
      {"spark-events-problems/nds_q72_dataproc_2_2.zstd", {}, 27321, 0, 49, 49, 13504, 8, 0, 0, 0, 0, true},
      {"spark-events-problems/dataproc.zstd", {}, 393, 0, 9, 9, 154, 2, 0, 0, 0, 0, true},
      {"spark-events-problems/python_udf_eventlog", {}, 23, 0, 2, 2, 2, 1, 0, 0, 0, 0, true},
      {"spark-events-problems/jdbc_eventlog.zstd", {}, 432, 0, 2, 4, 203, 1, 0, 0, 0, 0, true},
      {"spark-events-problems/nds_q88_photon_db_13_3.zstd", {}, 10141, 0, 57, 57, 4896, 2, 1, 0, 0, 0, false},
      {"spark-events-problems/db_subExecution_id.zstd", {}, 368, 0, 11, 11, 137, 2, 0, 0, 0, 0, false},
      {"spark-events-problems/db_sim_eventlog",
       {"spark-events-problems/db_sim_eventlog/eventlog-2021-06-15--15-00.gz",
        "spark-events-problems/db_sim_eventlog/eventlog"},
       5621,
       0,
       1,
       4,
       2801,
       1,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-problems/eventlog_v2_local-1623876083964",
       {"spark-events-problems/eventlog_v2_local-1623876083964/events_1_local-1623876083964.zstd",
        "spark-events-problems/eventlog_v2_local-1623876083964/events_2_local-1623876083964.zstd"},
       5621,
       0,
       1,
       4,
       2801,
       1,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-problems/multiple_attempts/attempt_1_eventlog.zstd",
       {},
       275,
       0,
       5,
       5,
       107,
       10,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-problems/multiple_attempts/attempt_2_eventlog.zstd",
       {},
       277,
       0,
       5,
       5,
       107,
       10,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-problems/multiple_attempts/attempt_3_eventlog.zstd",
       {},
       277,
       0,
       5,
       5,
       107,
       10,
       0,
       0,
       0,
       0,
       true},
      {"spark-events-problems/multiple_attempts/attempt_4_eventlog.zstd",
       {},
       277,
       0,
       5,
       5,
       107,
       10,
       0,
       0,
       0,
       0,
       true},
  };
  return logs;
}

// What the parsed events add up to, in the README's terms.
struct Tally {
  std::size_t lines = 0;
  std::size_t malformed_lines = 0;
  std::size_t ignored_lines = 0;
  std::set<std::int32_t> jobs;
  std::set<std::pair<std::int32_t, std::int32_t>> stage_attempts;
  std::size_t tasks = 0;
  std::size_t executors_added = 0;
  std::size_t executors_removed = 0;
  std::size_t non_success_task_ends = 0;
  std::size_t failed_jobs = 0;
  std::size_t failed_stages = 0;
  bool application_end = false;
  std::vector<std::pair<std::size_t, std::string>> errors;  // 1-based line number, message
  std::map<std::string, std::size_t> ignored_by_type;

  void Add(std::size_t line_number, const Result<SparkEvent>& result) {
    ++lines;
    if (!result.ok()) {
      ++malformed_lines;
      errors.emplace_back(line_number, result.error().message);
      return;
    }
    std::visit([this](const auto& event) { Count(event); }, *result);
  }

  void Count(const IgnoredEvent& event) {
    ++ignored_lines;
    ++ignored_by_type[event.type];
  }
  void Count(const JobStart& event) { jobs.insert(event.job_id); }
  void Count(const JobEnd& event) { failed_jobs += event.result != JobResult::kSucceeded ? 1 : 0; }
  void Count(const StageSubmitted& event) {
    stage_attempts.emplace(event.stage.stage_id, event.stage.attempt_id);
  }
  void Count(const StageCompleted& event) {
    stage_attempts.emplace(event.stage.stage_id, event.stage.attempt_id);
    failed_stages += event.stage.failure_reason.has_value() ? 1 : 0;
  }
  void Count(const TaskEnd& event) {
    ++tasks;
    non_success_task_ends += event.reason != TaskEndReason::kSuccess ? 1 : 0;
  }
  void Count(const ExecutorAdded&) { ++executors_added; }
  void Count(const ExecutorRemoved&) { ++executors_removed; }
  void Count(const ApplicationEnd&) { application_end = true; }
  template <typename Other>
  void Count(const Other&) {}
};

// A log's decoded lines in one buffer ending with the parser's padding, so lines parse in place.
struct LoadedLog {
  std::string buffer;
  std::vector<std::string_view> lines;
};

std::optional<LoadedLog> Load(const std::filesystem::path& data_dir, const LogFigures& log,
                              std::string& why) {
  LoadedLog loaded;
  const std::vector<std::string> parts = log.parts.empty() ? std::vector<std::string>{log.name} : log.parts;
  for (const std::string& part : parts) {
    std::optional<std::string> content = test_data::ReadLogFile(data_dir / part, why);
    if (!content) return std::nullopt;
    loaded.buffer += *content;
    if (!loaded.buffer.empty() && loaded.buffer.back() != '\n') loaded.buffer += '\n';
  }
  const std::size_t content_size = loaded.buffer.size();
  loaded.buffer.append(kEventLinePadding, '\0');
  loaded.lines = test_data::SplitLines(std::string_view(loaded.buffer.data(), content_size));
  return loaded;
}

class ListenerEventRealLogs : public ::testing::TestWithParam<LogFigures> {};

TEST_P(ListenerEventRealLogs, EveryLineParsesAndTheFiguresMatchTheReadme) {
  const auto data_dir = test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << test_data::DataDirMissingMessage();
  const LogFigures& expected = GetParam();
  std::string why;
  const std::optional<LoadedLog> log = Load(*data_dir, expected, why);
  ASSERT_TRUE(log.has_value()) << why;

  EventParser parser;
  Tally tally;
  const char* const buffer_end = log->buffer.data() + log->buffer.size();
  // Small logs are parsed a second time through the copying path: same answer, line by line.
  const bool compare_with_copy = log->buffer.size() < (std::size_t{4} << 20);
  EventParser copying_parser;
  for (std::size_t index = 0; index < log->lines.size(); ++index) {
    const std::string_view line = log->lines[index];
    const auto result = parser.Parse(line, static_cast<std::size_t>(buffer_end - line.data()));
    if (compare_with_copy) {
      const auto copied = copying_parser.Parse(line);
      ASSERT_EQ(copied.ok(), result.ok()) << "line " << index + 1;
      if (result.ok()) {
        ASSERT_EQ(SparkEventName(*copied), SparkEventName(*result)) << "line " << index + 1;
      }
    }
    tally.Add(index + 1, result);
  }

  EXPECT_EQ(tally.lines, expected.lines);
  EXPECT_EQ(tally.malformed_lines, expected.malformed_lines);
  if (expected.malformed_lines == 0) {
    for (const auto& [line_number, message] : tally.errors)
      ADD_FAILURE() << "line " << line_number << ": " << message;
  }
  EXPECT_EQ(tally.jobs.size(), expected.jobs);
  EXPECT_EQ(tally.stage_attempts.size(), expected.stage_attempts);
  EXPECT_EQ(tally.tasks, expected.tasks);
  EXPECT_EQ(tally.executors_added, expected.executors_added);
  EXPECT_EQ(tally.executors_removed, expected.executors_removed);
  EXPECT_EQ(tally.non_success_task_ends, expected.non_success_task_ends);
  EXPECT_EQ(tally.failed_jobs, expected.failed_jobs);
  EXPECT_EQ(tally.failed_stages, expected.failed_stages);
  EXPECT_EQ(tally.application_end, expected.application_end);
  // Real logs hold block-manager and environment events, which are counted as ignored by type.
  if (tally.lines > 5) {
    EXPECT_GT(tally.ignored_lines, 0u);
  }
}

std::string TestName(const ::testing::TestParamInfo<LogFigures>& info) {
  std::string name = info.param.name.substr(info.param.name.find('/') + 1);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(ListenerEvent, ListenerEventRealLogs, ::testing::ValuesIn(AllLogs()), TestName);

TEST(ListenerEventRealLogsMalformed, TheBrokenLineOfTheRapidsLogIsAnErrorNamingItsType) {
  const auto data_dir = test_data::FindDataDir();
  if (!data_dir) GTEST_SKIP() << test_data::DataDirMissingMessage();
  LogFigures malformed;
  malformed.name = "spark-events-problems/malformed_json_eventlog.zstd";
  std::string why;
  const std::optional<LoadedLog> log = Load(*data_dir, malformed, why);
  ASSERT_TRUE(log.has_value()) << why;

  EventParser parser;
  Tally tally;
  for (std::size_t index = 0; index < log->lines.size(); ++index)
    tally.Add(index + 1, parser.Parse(log->lines[index]));
  ASSERT_EQ(tally.errors.size(), 1u);
  // README-rapids: line 4 of 477, a SparkListenerEnvironmentUpdate with a '_' before "JVM Information".
  EXPECT_EQ(tally.errors[0].first, 4u);
  EXPECT_EQ(tally.errors[0].second.rfind("SparkListenerEnvironmentUpdate: malformed JSON", 0), 0u)
      << tally.errors[0].second;
  // The lines after it are unaffected.
  EXPECT_EQ(tally.lines, 477u);
  EXPECT_EQ(tally.tasks, 217u);
}

}  // namespace
}  // namespace sparktrace::listener::events
