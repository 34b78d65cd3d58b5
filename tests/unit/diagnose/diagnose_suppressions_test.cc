// Suppressions in a rules file: both forms, the errors that name the item and field, glob matching,
// expiry, and how findings are marked.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "diagnose/glob_match.h"
#include "diagnose/rules_file.h"
#include "diagnose/suppression.h"

namespace sparktrace::diagnose {
namespace {

using std::chrono::sys_days;

sys_days Day(const char* text) { return *ParseDate(text); }

TEST(DiagnoseSuppressions, ReadFromYamlAndJsonAlike) {
  const auto yaml = ParseRulesFile(
      "data-skew: {min_tasks: 9}\n"
      "suppressions:\n"
      "  - id: s3-write-slow\n"
      "    dag: \"etl.*\"\n"
      "    task: load_?\n"
      "    reason: bucket migration, INFRA-12\n"
      "    until: 2026-11-01\n"
      "  - {id: \"*\", dag: \"*\", task: \"*\", reason: 'known', until: \"2026-01-31\"}\n",
      RulesFormat::kYaml);
  ASSERT_TRUE(yaml.ok()) << yaml.error().message;
  const auto json = ParseRulesFile(
      R"({"data-skew": {"min_tasks": 9}, "suppressions": [
           {"id": "s3-write-slow", "dag": "etl.*", "task": "load_?", "reason": "bucket migration, INFRA-12",
            "until": "2026-11-01"},
           {"id": "*", "dag": "*", "task": "*", "reason": "known", "until": "2026-01-31"}]})",
      RulesFormat::kJson);
  ASSERT_TRUE(json.ok()) << json.error().message;
  for (const RulesFile* rules : {&*yaml, &*json}) {
    EXPECT_EQ(rules->thresholds.data_skew.min_tasks, 9);
    ASSERT_EQ(rules->suppressions.size(), 2u);
    const Suppression& first = rules->suppressions[0];
    EXPECT_EQ(first.number, 1u);
    EXPECT_EQ(first.finding_id, "s3-write-slow");
    EXPECT_EQ(first.dag_glob, "etl.*");
    EXPECT_EQ(first.task_glob, "load_?");
    EXPECT_EQ(first.reason, "bucket migration, INFRA-12");
    EXPECT_EQ(DateText(first.until), "2026-11-01");
    EXPECT_EQ(rules->suppressions[1].number, 2u);
    EXPECT_EQ(rules->suppressions[1].finding_id, "*");
  }
}

TEST(DiagnoseSuppressions, AnEmptyListIsNoSuppression) {
  const auto rules = ParseRulesFile("suppressions: []\n", RulesFormat::kYaml);
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  EXPECT_TRUE(rules->suppressions.empty());
}

struct BadSuppression {
  RulesFormat format;
  std::string text;
  std::string message_part;
};

class DiagnoseBadSuppressions : public ::testing::TestWithParam<BadSuppression> {};

TEST_P(DiagnoseBadSuppressions, IsAnErrorNamingTheItemAndField) {
  const auto rules = ParseRulesFile(GetParam().text, GetParam().format);
  ASSERT_FALSE(rules.ok()) << GetParam().text;
  EXPECT_NE(rules.error().message.find(GetParam().message_part), std::string::npos) << rules.error().message;
}

constexpr const char* kGood = "{id: data-skew, dag: \"a\", task: \"b\", reason: r, until: 2026-01-01}";

INSTANTIATE_TEST_SUITE_P(
    Table, DiagnoseBadSuppressions,
    ::testing::Values(
        BadSuppression{RulesFormat::kYaml,
                       std::string("suppressions:\n  - ") + kGood +
                           "\n  - {id: data-skew, dag: a, task: b, until: 2026-01-01}\n",
                       "suppression #2 \"reason\": missing"},
        BadSuppression{RulesFormat::kYaml, "suppressions:\n  - {id: data-skew, dag: a, task: b, reason: r}\n",
                       "suppression #1 \"until\": missing"},
        BadSuppression{RulesFormat::kYaml,
                       "suppressions:\n  - {id: data-skew, dag: a, task: b, reason: r, until: 2026-02-30}\n",
                       "suppression #1 \"until\": expected a date YYYY-MM-DD"},
        BadSuppression{RulesFormat::kYaml,
                       "suppressions:\n  - {id: data-skew, dag: a, task: b, reason: r, until: 26-2-3}\n",
                       "suppression #1 \"until\": expected a date"},
        BadSuppression{RulesFormat::kYaml,
                       "suppressions:\n  - {id: data-skwe, dag: a, task: b, reason: r, until: 2026-01-01}\n",
                       "suppression #1 \"id\": unknown finding id \"data-skwe\""},
        BadSuppression{
            RulesFormat::kYaml,
            "suppressions:\n  - {id: data-skew, dag: a, task: b, reason: \" \", until: 2026-01-01}\n",
            "suppression #1 \"reason\": must not be empty"},
        BadSuppression{
            RulesFormat::kYaml,
            "suppressions:\n  - {id: data-skew, dag: a, task: b, reason: r, until: 2026-01-01, x: 1}\n",
            "suppression #1 \"x\": unknown field"},
        BadSuppression{RulesFormat::kYaml,
                       "suppressions:\n  - {id: data-skew, task: b, reason: r, until: 2026-01-01}\n",
                       "suppression #1 \"dag\": missing"},
        BadSuppression{RulesFormat::kYaml, "suppressions:\n  - {id: data-skew, dag: *, task: b}\n",
                       "quote a glob that starts with *"},
        BadSuppression{RulesFormat::kYaml, "suppressions:\n  - data-skew\n",
                       "\"suppressions\" #1: expected a mapping"},
        BadSuppression{RulesFormat::kYaml, "suppressions: {id: data-skew}\n",
                       "\"suppressions\": expected a list"},
        BadSuppression{RulesFormat::kYaml, "data-skew:\n  - {min_tasks: 3}\n",
                       "\"data-skew\": lists are not allowed"},
        BadSuppression{RulesFormat::kJson,
                       R"({"suppressions": [{"id": "data-skew", "dag": "a", "task": "b", "reason": 3,
                           "until": "2026-01-01"}]})",
                       "suppression #1 \"reason\": expected a string"},
        BadSuppression{RulesFormat::kJson, R"({"suppressions": [1]})",
                       "\"suppressions\" #1: expected an object"},
        BadSuppression{RulesFormat::kJson, R"({"gc-pressure": []})",
                       "\"gc-pressure\": lists are not allowed"}));

TEST(DiagnoseSuppressions, GlobsMatchStarAndQuestionMarkOnly) {
  EXPECT_TRUE(GlobMatches("*", ""));
  EXPECT_TRUE(GlobMatches("*", "anything"));
  EXPECT_TRUE(GlobMatches("etl.*", "etl.daily"));
  EXPECT_FALSE(GlobMatches("etl.*", "etl"));
  EXPECT_FALSE(GlobMatches("etl.*", "xetl.daily"));
  EXPECT_TRUE(GlobMatches("load_?", "load_1"));
  EXPECT_FALSE(GlobMatches("load_?", "load_12"));
  EXPECT_TRUE(GlobMatches("*_v?_*", "sales_v2_load"));
  EXPECT_TRUE(GlobMatches("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(GlobMatches("a*b*c", "aXbYbZ"));
  EXPECT_FALSE(GlobMatches("[ab]", "a"));  // no character classes: brackets are themselves
  EXPECT_TRUE(GlobMatches("[ab]", "[ab]"));
  EXPECT_TRUE(GlobMatches("a.c", "a.c"));
  EXPECT_FALSE(GlobMatches("a.c", "abc"));  // not a regex
}

std::vector<Suppression> Parsed(const std::string& yaml) {
  auto rules = ParseRulesFile(yaml, RulesFormat::kYaml);
  EXPECT_TRUE(rules.ok()) << rules.error().message;
  return rules.ok() ? rules->suppressions : std::vector<Suppression>{};
}

TEST(DiagnoseSuppressions, MatchByIdAndTaskUntilTheEndOfTheirDay) {
  const std::vector<Suppression> suppressions = Parsed(
      "suppressions:\n"
      "  - {id: s3-write-slow, dag: \"etl.*\", task: \"load_*\", reason: migration, until: 2026-11-01}\n");
  const SuppressionTask etl{"etl.daily", "load_orders"};
  const Suppression* found = FindSuppression(suppressions, "s3-write-slow", etl, Day("2026-11-01"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->reason, "migration");
  EXPECT_EQ(FindSuppression(suppressions, "data-skew", etl, Day("2026-11-01")), nullptr);
  EXPECT_EQ(FindSuppression(suppressions, "s3-write-slow", SuppressionTask{"etl.daily", "report"},
                            Day("2026-11-01")),
            nullptr);
  EXPECT_EQ(FindSuppression(suppressions, "s3-write-slow", SuppressionTask{"ml.train", "load_x"},
                            Day("2026-11-01")),
            nullptr);
  // Expired the day after `until`.
  EXPECT_TRUE(suppressions[0].ExpiredOn(Day("2026-11-02")));
  EXPECT_EQ(FindSuppression(suppressions, "s3-write-slow", etl, Day("2026-11-02")), nullptr);
  EXPECT_EQ(ExpiredMessage(suppressions[0]),
            "suppression #1 (s3-write-slow on dag etl.*, task load_*) expired on 2026-11-01: ignored");
}

TEST(DiagnoseSuppressions, WithoutAnAirflowTaskOnlyStarGlobsMatch) {
  const std::vector<Suppression> suppressions = Parsed(
      "suppressions:\n"
      "  - {id: data-skew, dag: \"etl.*\", task: \"*\", reason: narrow, until: 2026-11-01}\n"
      "  - {id: \"*\", dag: \"*\", task: \"*\", reason: everything, until: 2026-11-01}\n");
  const Suppression* found = FindSuppression(suppressions, "data-skew", std::nullopt, Day("2026-10-01"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->reason, "everything");
  // With a task, the first match in file order wins.
  found = FindSuppression(suppressions, "data-skew", SuppressionTask{"etl.x", "t"}, Day("2026-10-01"));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->reason, "narrow");
}

TEST(DiagnoseSuppressions, ApplyMarksOnlyTheMatchingFindings) {
  const std::vector<Suppression> suppressions = Parsed(
      "suppressions:\n"
      "  - {id: gc-pressure, dag: \"*\", task: \"*\", reason: \"JDK 17 upgrade pending\", until: "
      "2026-11-01}\n");
  std::vector<Finding> findings(2);
  findings[0].id = std::string(kGcPressure);
  findings[1].id = std::string(kDataSkew);
  ApplySuppressions(findings, suppressions, std::nullopt, Day("2026-10-31"));
  ASSERT_TRUE(findings[0].suppressed.has_value());
  EXPECT_EQ(findings[0].suppressed->reason, "JDK 17 upgrade pending");
  EXPECT_EQ(findings[0].suppressed->until, "2026-11-01");
  EXPECT_FALSE(findings[1].suppressed.has_value());
}

TEST(DiagnoseSuppressions, DatesRoundTripAndUtcDayFloors) {
  EXPECT_EQ(DateText(Day("2024-02-29")), "2024-02-29");
  EXPECT_FALSE(ParseDate("2023-02-29"));
  EXPECT_FALSE(ParseDate("2026-1-01"));
  EXPECT_FALSE(ParseDate("2026-13-01"));
  EXPECT_FALSE(ParseDate(" 2026-01-01"));
  const auto late = sys_days(Day("2026-03-04")) + std::chrono::hours(23) + std::chrono::minutes(59);
  EXPECT_EQ(UtcDay(late), Day("2026-03-04"));
}

}  // namespace
}  // namespace sparktrace::diagnose
