// `sparktrace diagnose --json` over every real event log in shared/data: no crash, findings well
// formed and ranked, and the findings the data is known to hold (README.md, README-rapids.md,
// README-thirdparty.md).

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/diagnose_command.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::diagnose {
namespace {

namespace test_data = listener::events::test_data;

// Findings per application log (by file or directory name): the JSON of each finding.
using FindingsByLog = std::map<std::string, std::vector<nlohmann::json>>;

FindingsByLog DiagnoseDirectory(const std::filesystem::path& directory) {
  const std::vector<std::string> args = {"--json", directory.string()};
  std::ostringstream out, err;
  const int code = cli::RunDiagnoseCommand(args, out, err);
  EXPECT_EQ(code, 0) << directory << ": " << err.str();
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  FindingsByLog result;
  for (const nlohmann::json& app : doc.at("applications")) {
    const std::string name =
        std::filesystem::path(app.at("log").at("path").get<std::string>()).filename().string();
    std::vector<nlohmann::json>& findings = result[name];
    for (const nlohmann::json& finding : app.at("findings")) findings.push_back(finding);
    for (const nlohmann::json& operation : app.at("operations")) {
      for (const nlohmann::json& finding : operation.at("findings")) findings.push_back(finding);
    }
  }
  return result;
}

std::set<std::string> Ids(const std::vector<nlohmann::json>& findings) {
  std::set<std::string> ids;
  for (const nlohmann::json& finding : findings) ids.insert(finding.at("id").get<std::string>());
  return ids;
}

class DiagnoseRealLogs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto data_dir = test_data::FindDataDir();
    if (!data_dir) return;
    for (const char* directory :
         {"spark-events", "spark-events-problems", "spark-events-derived",
          "spark-events-broken/last-attempt-incomplete", "spark-events-broken/previous-attempt-incomplete",
          "spark-events-thirdparty/kubeflow-mcp-shs"}) {
      for (auto& [name, findings] : DiagnoseDirectory(*data_dir / directory)) {
        (*logs_)[std::string(directory) + "/" + name] = std::move(findings);
      }
    }
  }
  void SetUp() override {
    if (!test_data::FindDataDir()) GTEST_SKIP() << test_data::DataDirMissingMessage();
  }
  static const std::vector<nlohmann::json>& Findings(const std::string& log) {
    static const std::vector<nlohmann::json> kNone;
    auto found = logs_->find(log);
    EXPECT_NE(found, logs_->end()) << log << " was not diagnosed";
    return found == logs_->end() ? kNone : found->second;
  }
  static inline std::map<std::string, std::vector<nlohmann::json>>* logs_ =
      new std::map<std::string, std::vector<nlohmann::json>>();
};

TEST_F(DiagnoseRealLogs, EveryLogIsDiagnosedWithWellFormedRankedFindings) {
  EXPECT_GE(logs_->size(), 45u);
  for (const auto& [log, findings] : *logs_) {
    double previous = 1e300;
    std::vector<double> application_impacts;
    for (const nlohmann::json& finding : findings) {
      EXPECT_EQ(finding.at("recipe").get<std::string>().rfind("docs/recipes/troubleshoot/", 0), 0u) << log;
      EXPECT_FALSE(finding.at("fix").empty()) << log;
      EXPECT_FALSE(finding.at("evidence").empty()) << log;
      const double impact = finding.at("impact_seconds").get<double>();
      EXPECT_GE(impact, 0) << log;
      if (finding.at("scope").at("operation_id").is_null()) {
        EXPECT_LE(impact, previous) << log << ": not ranked by impact";
        previous = impact;
      }
    }
  }
}

TEST_F(DiagnoseRealLogs, KnownFailuresAreReported) {
  // README.md: the one failed job, failed stage and ExceptionFailure task of the apache/spark logs.
  const auto& failed_job = Findings("spark-events/local-1422981780767");
  ASSERT_EQ(Ids(failed_job).count("task-failures"), 1u);
  for (const nlohmann::json& finding : failed_job) {
    if (finding.at("id") == "task-failures") {
      EXPECT_EQ(finding.at("severity"), "critical");
    }
  }
  for (const char* log :
       {"spark-events/app-20161115172038-0000", "spark-events/app-20161116163331-0000",
        "spark-events/app-20180109111548-0000", "spark-events/application_1516285256255_0012",
        "spark-events-problems/tasks_executors_fail_compressed_eventlog.zstd",
        "spark-events-problems/complex_dec_eventlog.zstd"}) {
    EXPECT_EQ(Ids(Findings(log)).count("task-failures"), 1u) << log;
  }
  // Only a speculative copy killed ("another attempt succeeded"): no failure.
  EXPECT_EQ(Ids(Findings("spark-events/application_1628109047826_1317105")).count("task-failures"), 0u);
}

TEST_F(DiagnoseRealLogs, GpuOutOfMemoryIsOomLinkedToTheFailures) {
  // README-rapids: 112 ExceptionFailure GpuSplitAndRetryOOM ("GPU OutOfMemory").
  const auto& findings = Findings("spark-events-problems/gpu_oom_eventlog.zstd");
  ASSERT_EQ(Ids(findings).count("oom-and-spill"), 1u);
  bool linked = false;
  for (const nlohmann::json& finding : findings) {
    if (finding.at("id") != "oom-and-spill") continue;
    EXPECT_EQ(finding.at("severity"), "critical");
    for (const nlohmann::json& link : finding.at("related")) {
      linked = linked || (link.at("relation") == "same-cause" &&
                          link.at("key").get<std::string>().rfind("task-failures@", 0) == 0);
    }
  }
  EXPECT_TRUE(linked);
}

TEST_F(DiagnoseRealLogs, HighGcShareWithEnoughExecutorTimeIsReported) {
  // README-rapids: 15% GC over 174 s of run time (dynamic allocation, 15 executors).
  EXPECT_EQ(
      Ids(Findings("spark-events-problems/eventlog_4nodes_8cores_dynamic_alloc.zstd")).count("gc-pressure"),
      1u);
  // 35% GC, but of 7 s of run time: under the floor.
  EXPECT_EQ(Ids(Findings("spark-events-problems/jdbc_eventlog.zstd")).count("gc-pressure"), 0u);
}

const nlohmann::json* FindingOf(const std::vector<nlohmann::json>& findings, std::string_view id) {
  for (const nlohmann::json& finding : findings) {
    if (finding.at("id") == id) return &finding;
  }
  return nullptr;
}

double EvidenceValue(const nlohmann::json& finding, std::string_view name) {
  for (const nlohmann::json& evidence : finding.at("evidence")) {
    if (evidence.at("name") == name) return evidence.at("value").get<double>();
  }
  ADD_FAILURE() << "no evidence " << name << " in " << finding.at("key");
  return -1;
}

TEST_F(DiagnoseRealLogs, NycTaxiOutputStageOnTwoOfFourCoresIsLowParallelism) {
  // README-thirdparty.md: the NYC-taxi job on Kubernetes, 4 one-core executors. Its output stage 7
  // (the plan repartitions to 2 before the Parquet write) runs 2 tasks, each re-encoding 2.5 GiB
  // (110be3a8, 137 s) or 5.0 GiB (cc4d115f, 287 s) of shuffle.
  struct Run {
    const char* log;
    double task_gib;
    double suggested_partitions;  // the stage's bytes in 128 MiB partitions, in whole waves of 4
  };
  for (const Run& run :
       {Run{"spark-events-thirdparty/kubeflow-mcp-shs/eventlog_v2_spark-110be3a8424d4a2789cb88134418217b",
            2.5, 44},
        Run{"spark-events-thirdparty/kubeflow-mcp-shs/eventlog_v2_spark-cc4d115f011443d787f03a71a476a745",
            5.0, 84}}) {
    SCOPED_TRACE(run.log);
    const std::vector<nlohmann::json>& findings = Findings(run.log);
    const nlohmann::json* low = FindingOf(findings, "low-parallelism");
    ASSERT_NE(low, nullptr);
    EXPECT_EQ(low->at("key"), "low-parallelism@stage:7.0");
    EXPECT_EQ(EvidenceValue(*low, "tasks"), 2);
    EXPECT_EQ(EvidenceValue(*low, "free_slots"), 4);
    EXPECT_NEAR(EvidenceValue(*low, "task_bytes") / (1 << 30), run.task_gib, 0.05);
    EXPECT_EQ(EvidenceValue(*low, "suggested_partitions"), run.suggested_partitions);
    // At full parallelism the stage's task time (2 tasks) runs on 4 cores: about half its duration.
    const double stage_s = EvidenceValue(*low, "stage_duration_ms") / 1000;
    EXPECT_GT(low->at("impact_seconds").get<double>(), 0.45 * stage_s);
    EXPECT_LT(low->at("impact_seconds").get<double>(), 0.6 * stage_s);
    EXPECT_NE(low->at("fix").at(0).get<std::string>().find("df.repartition("), std::string::npos);
    EXPECT_EQ(low->at("recipe"), "docs/recipes/troubleshoot/low-parallelism.md");
    // The stage is CPU-bound: not a slow write.
    EXPECT_EQ(FindingOf(findings, "s3-write-slow"), nullptr);
  }
  // The 7 s PythonPi of the same fixture: 2 tasks on 1 executor, nothing to report.
  EXPECT_TRUE(
      Findings("spark-events-thirdparty/kubeflow-mcp-shs/eventlog_v2_spark-bcec39f6201b42b9925124595baad260")
          .empty());
  // README.md's LargeBlocks test (application_1553914137147_0018): two jobs of 2 tasks of 2.3 GiB
  // each run at once on 3 cores, so no core was free for more tasks.
  EXPECT_EQ(FindingOf(Findings("spark-events/application_1553914137147_0018"), "low-parallelism"), nullptr);
}

TEST_F(DiagnoseRealLogs, PlanRulesFindTheExplodingJoinAndLeaveTheNearMisses) {
  // TPC-DS q72 joins catalog_sales to inventory on item_sk alone: 28.6M and 981.9M rows in, 5.24G out.
  const nlohmann::json* exploding =
      FindingOf(Findings("spark-events-problems/nds_q72_dataproc_2_2.zstd"), "exploding-join");
  ASSERT_NE(exploding, nullptr);
  EXPECT_EQ(exploding->at("scope").at("kind"), "sql-operator");
  EXPECT_EQ(exploding->at("scope").at("sql_execution_id"), 24);
  EXPECT_EQ(exploding->at("scope").at("plan_node_name"), "SortMergeJoin");
  EXPECT_EQ(EvidenceValue(*exploding, "output_rows"), 5241443564.0);
  // Near misses (bench/eval/real_logs.json): Sorts spilling 144 and 384 MiB, Photon nested loops over
  // one-row sides, a 19 MB broadcast in 5.7 s, a 60x join that makes 6M rows.
  EXPECT_EQ(FindingOf(Findings("spark-events-problems/aqeshuffle_eventlog.zstd"), "operator-spill"), nullptr);
  EXPECT_EQ(FindingOf(Findings("spark-events-problems/nds_q88_photon_db_13_3.zstd"), "nested-loop-join"),
            nullptr);
  EXPECT_EQ(FindingOf(Findings("spark-events-problems/dataproc.zstd"), "broadcast-near-limit"), nullptr);
  EXPECT_EQ(FindingOf(Findings("spark-events/app-20200706201101-0003"), "exploding-join"), nullptr);
  // Every plan finding names its execution and operator.
  for (const auto& [log, findings] : *logs_) {
    for (const nlohmann::json& finding : findings) {
      if (finding.at("scope").at("kind") != "sql-operator") continue;
      EXPECT_TRUE(finding.at("scope").at("sql_execution_id").is_number_integer()) << log;
      EXPECT_TRUE(finding.at("scope").at("plan_node_id").is_number_integer()) << log;
      EXPECT_FALSE(finding.at("scope").at("plan_node_name").get<std::string>().empty()) << log;
    }
  }
}

TEST_F(DiagnoseRealLogs, SmallHealthyLogsHaveNoFinding) {
  for (const char* log :
       {"spark-events/local-1422981759269", "spark-events/local-1425081759269",
        "spark-events/local-1430917381534", "spark-events/local-1596020211915",
        "spark-events/application_1553914137147_0018", "spark-events-problems/python_udf_eventlog",
        "spark-events-problems/truncated_eventlog"}) {
    EXPECT_TRUE(Findings(log).empty()) << log << ": " << Findings(log).front().at("key");
  }
}

}  // namespace
}  // namespace sparktrace::diagnose
