// One wording of a finding (diagnose/finding_words.h) for the text report and the feed's span events.

#include "diagnose/finding_words.h"

#include <gtest/gtest.h>

#include <string>

#include "diagnose/finding.h"
#include "feed/finding_span_events.h"
#include "tracing/finding_event.h"

namespace sparktrace::diagnose {
namespace {

TEST(FindingWords, ScopeNamesWhatTheFindingIsAbout) {
  FindingScope scope;
  EXPECT_EQ(ScopeWords(scope), "application");
  scope.kind = ScopeKind::kOperation;
  scope.operation_id = "op-1";
  EXPECT_EQ(ScopeWords(scope), "operation");
  scope.kind = ScopeKind::kJob;
  scope.job_id = 4;
  EXPECT_EQ(ScopeWords(scope), "job 4");
  scope.kind = ScopeKind::kStage;
  scope.stage_id = 3;
  scope.stage_attempt = 1;
  EXPECT_EQ(ScopeWords(scope), "stage 3.1 (job 4)");
  scope.job_id.reset();
  EXPECT_EQ(ScopeWords(scope), "stage 3.1");
  scope.kind = ScopeKind::kSqlOperator;
  scope.sql_execution_id = 7;
  scope.plan_node_id = 2;
  scope.plan_node_name = "SortMergeJoin";
  EXPECT_EQ(ScopeWords(scope), "SQL execution 7, node 2 SortMergeJoin");
}

TEST(FindingWords, EvidenceWritesUnitsThatAreNotPlainNumbersAndTheThreshold) {
  EXPECT_EQ(EvidenceWords({"max_task_ms", 81234, std::nullopt, "ms", 60000, Comparison::kAtLeast}),
            "max_task_ms=81234 ms (>= 60000)");
  EXPECT_EQ(EvidenceWords({"gc_share", 0.41234, std::nullopt, "share", 0.2, Comparison::kAtLeast}),
            "gc_share=0.4123 (>= 0.2)");
  EXPECT_EQ(EvidenceWords({"failed_tasks", 3, std::nullopt, "count", std::nullopt, Comparison::kNone}),
            "failed_tasks=3");
  EXPECT_EQ(
      EvidenceWords({"fs.s3a.committer.name", 0, std::string("file"), "", std::nullopt, Comparison::kNone}),
      "fs.s3a.committer.name=file");
  EXPECT_EQ(NumberWords(1.5e20), "1.5e+20");
}

// The proxy's feed words a finding's event as the text report does.
TEST(FindingWords, TheFeedsFindingEventsUseTheSameWords) {
  Finding finding;
  finding.id = "data-skew";
  finding.scope.kind = ScopeKind::kStage;
  finding.scope.job_id = 2;
  finding.scope.stage_id = 5;
  finding.evidence.push_back({"max_over_median", 12.5, std::nullopt, "ratio", 5, Comparison::kAtLeast});
  const auto event = tracing::DecodeFindingEvent(feed::FindingSpanEvent(finding, 1'000'000));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->scope, ScopeWords(finding.scope));
  EXPECT_EQ(event->scope, "stage 5.0 (job 2)");
  ASSERT_EQ(event->evidence.size(), 1u);
  EXPECT_EQ(event->evidence[0], "max_over_median=12.5 (>= 5)");
}

}  // namespace
}  // namespace sparktrace::diagnose
