// increment/attempt_delta.h: an attempt's row after changes to its parts, and when only adding up
// every part can tell.
#include "tracing/store/increment/attempt_delta.h"

#include <gtest/gtest.h>

#include <vector>

#include "tracing/store/task_index/task_index.h"

namespace sparktrace::tracing::store::task_index {
namespace {

Part PartSpanning(std::uint64_t start, std::uint64_t end, std::int64_t spans) {
  Part part;
  part.start = start;
  part.end = end;
  part.spans = spans;
  return part;
}

AttemptSums RowOf(std::int64_t start, std::int64_t end, std::int64_t spans) {
  AttemptSums sums;
  sums.start_unix_nano = start;
  sums.end_unix_nano = end;
  sums.span_count = spans;
  return sums;
}

TEST(AttemptDelta, NewPartsAddTheirFigures) {
  Part failed = PartSpanning(5, 50, 2);
  failed.operations = 1;
  failed.failed_operations = 1;
  auto next = AddPartChanges(RowOf(10, 40, 3), {{"e", std::nullopt, PartSpanning(20, 30, 1)},
                                                {"a", std::nullopt, failed},
                                                {"c", std::nullopt, PartSpanning(12, 20, 1)}});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->start_unix_nano, 5);
  EXPECT_EQ(next->end_unix_nano, 50);
  EXPECT_EQ(next->span_count, 7);
  EXPECT_EQ(next->error_count, 1);
  EXPECT_EQ(AddPartChanges(RowOf(0, 0, 0), {{"x", std::nullopt, PartSpanning(1, 2, 1)}})->span_count, 1);
}

TEST(AttemptDelta, AChangedPartReplacesItsOldFigures) {
  Part before = PartSpanning(10, 20, 2);
  before.open = 1;
  Part after = PartSpanning(10, 25, 3);
  AttemptSums row = RowOf(10, 20, 2);
  row.open_count = 1;
  auto next = AddPartChanges(row, {{"t", before, after}});
  ASSERT_TRUE(next);
  EXPECT_EQ(next->span_count, 3);
  EXPECT_EQ(next->open_count, 0);
  EXPECT_EQ(next->end_unix_nano, 25);
}

TEST(AttemptDelta, WhatOnlyAddingUpEveryPartCanTell) {
  Part with_finding = PartSpanning(10, 20, 1);
  with_finding.findings = 1;
  EXPECT_FALSE(AddPartChanges(RowOf(10, 20, 1), {{"b", std::nullopt, with_finding}}));
  // The part that held the attempt's end ends earlier now.
  EXPECT_FALSE(AddPartChanges(RowOf(10, 20, 2), {{"b", PartSpanning(15, 20, 1), PartSpanning(15, 18, 1)}}));
  // The part that held the attempt's start starts later now.
  EXPECT_FALSE(AddPartChanges(RowOf(10, 20, 2), {{"a", PartSpanning(10, 15, 1), PartSpanning(12, 15, 1)}}));
}

// A new attempt's row from the parts one batch created: what adding up its stored parts writes.
TEST(AttemptDelta, ANewAttemptsRowAddsUpTheBatchsParts) {
  Part first = PartSpanning(20, 30, 2);
  first.name = "etl.load";
  first.open = 1;
  first.phase_ms[0] = 7;
  first.findings = 1;
  first.top_finding = R"({"id":"small"})";
  first.top_impact = 2;
  Part second = PartSpanning(10, 25, 3);
  second.name = "etl.load";
  second.operations = 2;
  second.failed_operations = 1;
  second.phase_ms[0] = 5;
  second.findings = 2;
  second.top_finding = R"({"id":"large"})";
  second.top_impact = 9;
  Part third = PartSpanning(15, 40, 1);  // no finding: its impact counts for nothing
  third.name = "etl.load";
  third.top_impact = 50;
  // The row's name and top finding point into the changes, which must outlive it.
  const std::vector<PartChange> changes = {
      {"a", std::nullopt, first}, {"b", std::nullopt, second}, {"c", std::nullopt, third}};
  const auto row = RowOfNewParts(changes);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->name, "etl.load");
  EXPECT_EQ(row->sums.start_unix_nano, 10);
  EXPECT_EQ(row->sums.end_unix_nano, 40);
  EXPECT_EQ(row->sums.span_count, 6);
  EXPECT_EQ(row->sums.error_count, 1);
  EXPECT_EQ(row->sums.open_count, 1);
  EXPECT_EQ(row->sums.phase_ms[0], 12);
  EXPECT_EQ(row->sums.finding_count, 3);
  EXPECT_EQ(row->sums.top_finding, R"({"id":"large"})");

  // A part that replaces one: the attempt may have other parts stored.
  EXPECT_FALSE(RowOfNewParts({{"a", std::nullopt, first}, {"b", second, third}}));
  EXPECT_FALSE(RowOfNewParts({}));
}

}  // namespace
}  // namespace sparktrace::tracing::store::task_index
