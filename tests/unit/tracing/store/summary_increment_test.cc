// increment/summary_increment.h: a batch added to a trace's stored summary, and the batches only a
// recompute can add.
#include "tracing/store/increment/summary_increment.h"

#include <gtest/gtest.h>

namespace sparktrace::tracing::store {
namespace {

SummarySpan SummaryOf(bool root, std::int64_t start, std::int64_t end) {
  SummarySpan span;
  span.root = root;
  span.name = root ? "root" : "child";
  span.start_unix_nano = start;
  span.end_unix_nano = end;
  return span;
}

TEST(SummaryIncrement, NewSpansAddTheirCountsEndAndIdentity) {
  SummarySpan failed = SummaryOf(false, 20, 300);
  failed.error = true;
  failed.dag_id = "etl";
  failed.try_number = 2;
  SummarySpan other = SummaryOf(false, 30, 40);
  other.dag_id = "a_dag";
  auto change = SummaryIncrement(10, 200, {{failed, std::nullopt}, {other, std::nullopt}});
  ASSERT_TRUE(change);
  EXPECT_EQ(change->end_unix_nano, 300);
  EXPECT_EQ(change->spans_added, 2);
  EXPECT_EQ(change->errors_added, 1);
  EXPECT_EQ(change->dag_id, "etl");  // the greatest, as max() over the spans
  EXPECT_EQ(change->try_number, 2);
  EXPECT_FALSE(change->task_id);
}

TEST(SummaryIncrement, AReplacedSpanChangesOnlyItsStatusAndEnd) {
  SummarySpan running = SummaryOf(false, 20, 50);
  running.error = true;
  SummarySpan done = SummaryOf(false, 20, 80);
  auto change = SummaryIncrement(10, 60, {{done, running}});
  ASSERT_TRUE(change);
  EXPECT_EQ(change->spans_added, 0);
  EXPECT_EQ(change->errors_added, -1);
  EXPECT_EQ(change->end_unix_nano, 80);
}

TEST(SummaryIncrement, WhatOnlyARecomputeCanTell) {
  // A new root may rename the trace.
  EXPECT_FALSE(SummaryIncrement(10, 60, {{SummaryOf(true, 20, 30), std::nullopt}}));
  // A span at or before the start may be the earliest, whose name a trace without a root shows.
  EXPECT_FALSE(SummaryIncrement(10, 60, {{SummaryOf(false, 10, 30), std::nullopt}}));
  // The span that ended last ends earlier now: which one is last is unknown.
  EXPECT_FALSE(SummaryIncrement(10, 60, {{SummaryOf(false, 20, 40), SummaryOf(false, 20, 60)}}));
  // A replaced span with another identity: the greatest may have gone.
  SummarySpan renamed = SummaryOf(false, 20, 30);
  renamed.task_id = "load";
  EXPECT_FALSE(SummaryIncrement(10, 60, {{renamed, SummaryOf(false, 20, 30)}}));
}

}  // namespace
}  // namespace sparktrace::tracing::store
