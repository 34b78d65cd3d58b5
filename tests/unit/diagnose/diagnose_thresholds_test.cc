// Rules files: JSON and YAML overrides over the defaults, and the errors that name what is wrong.

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "diagnose/rule_thresholds.h"

namespace sparktrace::diagnose {
namespace {

TEST(DiagnoseThresholds, DefaultsAreTheDocumentedOnes) {
  const RuleThresholds defaults;
  EXPECT_EQ(defaults.data_skew.min_duration_ratio, 4.0);
  EXPECT_EQ(defaults.data_skew.min_excess_seconds, 10.0);
  EXPECT_EQ(defaults.resource_wait_long.min_wait_seconds, 30.0);
  EXPECT_EQ(defaults.gc_pressure.min_gc_share, 0.07);
  EXPECT_TRUE(defaults.idle_executors.enabled);
  EXPECT_EQ(defaults.low_parallelism.min_task_bytes, 512 * kMiB);
  EXPECT_EQ(defaults.low_parallelism.min_duration_ratio, 10.0);
  EXPECT_EQ(defaults.low_parallelism.min_task_seconds, 60.0);
  EXPECT_EQ(defaults.low_parallelism.target_partition_bytes, 128 * kMiB);
  EXPECT_EQ(defaults.low_parallelism.min_impact_seconds, 10.0);
  EXPECT_EQ(defaults.low_parallelism.min_impact_share, 0.03);
}

TEST(DiagnoseThresholds, LowParallelismKeysOverride) {
  const auto thresholds = ParseRuleThresholds(
      "low-parallelism: {min_task_bytes: 1073741824, min_duration_ratio: 20, enabled: false}\n",
      RulesFormat::kYaml);
  ASSERT_TRUE(thresholds.ok()) << thresholds.error().message;
  EXPECT_EQ(thresholds->low_parallelism.min_task_bytes, 1024 * kMiB);
  EXPECT_EQ(thresholds->low_parallelism.min_duration_ratio, 20.0);
  EXPECT_FALSE(thresholds->low_parallelism.enabled);
  EXPECT_EQ(thresholds->low_parallelism.min_task_seconds, 60.0);  // untouched
  const auto fractional =
      ParseRuleThresholds(R"({"low-parallelism": {"min_task_bytes": 1.5}})", RulesFormat::kJson);
  EXPECT_FALSE(fractional.ok());  // an integer key
}

TEST(DiagnoseThresholds, JsonOverridesSomeKeys) {
  const auto thresholds = ParseRuleThresholds(
      R"({"data-skew": {"min_duration_ratio": 8, "min_tasks": 20, "enabled": false},
          "general": {"critical_impact_share": 0.5}, "gc-pressure": {}})",
      RulesFormat::kJson);
  ASSERT_TRUE(thresholds.ok()) << thresholds.error().message;
  EXPECT_EQ(thresholds->data_skew.min_duration_ratio, 8.0);
  EXPECT_EQ(thresholds->data_skew.min_tasks, 20);
  EXPECT_FALSE(thresholds->data_skew.enabled);
  EXPECT_EQ(thresholds->general.critical_impact_share, 0.5);
  EXPECT_EQ(thresholds->data_skew.min_excess_seconds, 10.0);  // untouched
}

TEST(DiagnoseThresholds, YamlBlockAndFlowOverrideSomeKeys) {
  const auto thresholds = ParseRuleThresholds(
      "# stricter skew\n"
      "data-skew:\n"
      "  min_duration_ratio: 8.5\n"
      "  min_max_task_bytes: 1048576\n"
      "gc-pressure: {enabled: false, min_gc_share: 0.3}\n"
      "idle-executors:\n",
      RulesFormat::kYaml);
  ASSERT_TRUE(thresholds.ok()) << thresholds.error().message;
  EXPECT_EQ(thresholds->data_skew.min_duration_ratio, 8.5);
  EXPECT_EQ(thresholds->data_skew.min_max_task_bytes, 1048576);
  EXPECT_FALSE(thresholds->gc_pressure.enabled);
  EXPECT_EQ(thresholds->gc_pressure.min_gc_share, 0.3);
}

TEST(DiagnoseThresholds, EmptyYamlMeansDefaults) {
  const auto thresholds = ParseRuleThresholds("", RulesFormat::kYaml);
  ASSERT_TRUE(thresholds.ok()) << thresholds.error().message;
  EXPECT_EQ(thresholds->data_skew.min_duration_ratio, 4.0);
}

struct BadRules {
  RulesFormat format;
  std::string text;
  std::string message_part;
};

class DiagnoseBadThresholds : public ::testing::TestWithParam<BadRules> {};

TEST_P(DiagnoseBadThresholds, IsAnErrorNamingTheKey) {
  const auto thresholds = ParseRuleThresholds(GetParam().text, GetParam().format);
  ASSERT_FALSE(thresholds.ok()) << GetParam().text;
  EXPECT_NE(thresholds.error().message.find(GetParam().message_part), std::string::npos)
      << thresholds.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    Table, DiagnoseBadThresholds,
    ::testing::Values(
        BadRules{RulesFormat::kJson, R"({"data-skew": {"min_ratio": 3}})",
                 "unknown key \"data-skew.min_ratio\""},
        BadRules{RulesFormat::kYaml, "data-skew:\n  min_ratio: 3\n", "unknown key \"data-skew.min_ratio\""},
        BadRules{RulesFormat::kYaml, "data-skwe:\n  min_tasks: 3\n", "unknown section \"data-skwe\""},
        BadRules{RulesFormat::kJson, R"({"data-skew": {"min_tasks": "8"}})",
                 "\"data-skew.min_tasks\": expected a number"},
        BadRules{RulesFormat::kYaml, "data-skew:\n  min_duration_ratio: \"8\"\n",
                 "\"data-skew.min_duration_ratio\": expected a number"},
        BadRules{RulesFormat::kYaml, "data-skew:\n  min_tasks: 2.5\n",
                 "\"data-skew.min_tasks\": expected an integer"},
        BadRules{RulesFormat::kYaml, "gc-pressure:\n  enabled: 1\n",
                 "\"gc-pressure.enabled\": expected true or false"},
        BadRules{RulesFormat::kJson, R"({"gc-pressure": {"enabled": "yes"}})",
                 "\"gc-pressure.enabled\": expected true or false"},
        BadRules{RulesFormat::kYaml, "gc-pressure:\n  min_gc_share: -0.1\n", "must not be negative"},
        BadRules{RulesFormat::kYaml, "gc-pressure:\n  min_gc_share: [1, 2]\n", "gc-pressure"},
        BadRules{RulesFormat::kYaml, "gc-pressure: 3\n", "\"gc-pressure\": expected a mapping"},
        BadRules{RulesFormat::kYaml, "data-skew:\n  min_tasks: 3\n bad indent: [\n", "malformed YAML"},
        BadRules{RulesFormat::kJson, R"({"data-skew": )", "malformed JSON"},
        BadRules{RulesFormat::kJson, R"([1, 2])", "not an object"}));

class DiagnoseRulesFile : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::temp_directory_path() /
                 ("sparktrace-rules-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                  "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto path = directory_ / name;
    std::ofstream(path) << text;
    return path.string();
  }
  std::filesystem::path directory_;
};

TEST_F(DiagnoseRulesFile, LoadsJsonAndYamlByContent) {
  const auto json = LoadRuleThresholds(Write("rules.json", "  {\"data-skew\": {\"min_tasks\": 12}}"));
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(json->data_skew.min_tasks, 12);
  const auto yaml = LoadRuleThresholds(Write("rules.yaml", "data-skew:\n  min_tasks: 13\n"));
  ASSERT_TRUE(yaml.ok()) << yaml.error().message;
  EXPECT_EQ(yaml->data_skew.min_tasks, 13);
}

TEST_F(DiagnoseRulesFile, ErrorsNameTheFile) {
  const std::string bad = Write("bad.yaml", "data-skew:\n  nope: 1\n");
  auto loaded = LoadRuleThresholds(bad);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message.rfind(bad + ": unknown key", 0), 0u) << loaded.error().message;
  const std::string missing = (directory_ / "missing.yaml").string();
  loaded = LoadRuleThresholds(missing);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find(missing), std::string::npos);
  loaded = LoadRuleThresholds(directory_.string());
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("not a regular file"), std::string::npos) << loaded.error().message;
}

}  // namespace
}  // namespace sparktrace::diagnose
