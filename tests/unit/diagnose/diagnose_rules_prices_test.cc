// The rules file's `cost` section: prices read alike from YAML and JSON, beside thresholds and
// suppressions, and every bad price an error naming its key.

#include <gtest/gtest.h>

#include <string>

#include "diagnose/rules_file.h"

namespace sparktrace::diagnose {
namespace {

TEST(DiagnoseRulesPrices, ReadFromYamlAndJsonAlike) {
  const auto yaml = ParseRulesFile(
      "cost: {core_hour: 0.04, gib_hour: 0.005}\n"
      "data-skew: {min_tasks: 9}\n",
      RulesFormat::kYaml);
  ASSERT_TRUE(yaml.ok()) << yaml.error().message;
  const auto json =
      ParseRulesFile(R"({"cost": {"core_hour": 0.04, "gib_hour": 0.005}, "data-skew": {"min_tasks": 9}})",
                     RulesFormat::kJson);
  ASSERT_TRUE(json.ok()) << json.error().message;
  for (const RulesFile* rules : {&*yaml, &*json}) {
    EXPECT_DOUBLE_EQ(rules->prices.core_hour.value_or(-1), 0.04);
    EXPECT_DOUBLE_EQ(rules->prices.gib_hour.value_or(-1), 0.005);
    EXPECT_EQ(rules->thresholds.data_skew.min_tasks, 9);
  }
}

TEST(DiagnoseRulesPrices, OnePriceAloneLeavesTheOtherUnset) {
  const auto rules = ParseRulesFile("cost:\n  core_hour: 0\n", RulesFormat::kYaml);
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  EXPECT_EQ(rules->prices.core_hour, 0.0);
  EXPECT_FALSE(rules->prices.gib_hour.has_value());
  EXPECT_FALSE(ParseRulesFile("data-skew: {min_tasks: 9}\n", RulesFormat::kYaml)->prices.core_hour);
}

struct BadPrice {
  const char* text;
  const char* message_part;
};

class DiagnoseBadPrices : public testing::TestWithParam<BadPrice> {};

TEST_P(DiagnoseBadPrices, IsAnErrorNamingTheKey) {
  const auto rules = ParseRulesFile(GetParam().text, RulesFormat::kYaml);
  ASSERT_FALSE(rules.ok());
  EXPECT_NE(rules.error().message.find(GetParam().message_part), std::string::npos) << rules.error().message;
}

INSTANTIATE_TEST_SUITE_P(Prices, DiagnoseBadPrices,
                         testing::Values(BadPrice{"cost: {core_hour: -1}\n", "\"cost.core_hour\""},
                                         BadPrice{"cost: {gib_hour: cheap}\n", "\"cost.gib_hour\": 'cheap'"},
                                         BadPrice{"cost: {gib_hour: \"0.1\"}\n", "\"cost.gib_hour\""},
                                         BadPrice{"cost: {core_hours: 1}\n",
                                                  "unknown key \"cost.core_hours\""}));

}  // namespace
}  // namespace sparktrace::diagnose
