// The critical path (traceview/critical_path.h) on hand-made DAGs; times in ms after kOriginMs,
// expected paths worked out in the comments.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/critical_path.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

using traceview_test::kOriginMs;
using traceview_test::MakeSpan;

tracing::Span Operation(std::uint32_t id, double start, double end) {
  return MakeSpan("spark_connect.operation", id, 0, start, end);
}

tracing::Span Job(std::uint32_t id, std::uint32_t parent, double start, double end) {
  return MakeSpan("spark.job", id, parent, start, end);
}

// A stage span; `parents` nullopt leaves spark.stage.parent_ids out (older traces).
tracing::Span Stage(std::uint32_t id, std::uint32_t job, std::int64_t stage_id, double start, double end,
                    std::optional<std::vector<std::string>> parents, std::int64_t attempt = 0) {
  tracing::Span span = MakeSpan("spark.stage", id, job, start, end);
  span.attributes.push_back({"spark.stage.id", stage_id});
  span.attributes.push_back({"spark.stage.attempt", attempt});
  if (parents) span.attributes.push_back({"spark.stage.parent_ids", *parents});
  return span;
}

// The span ids (their numbers) of the path, and of its segments, in order.
std::vector<std::uint32_t> Ids(const std::vector<tracing::Span>& spans,
                               const std::vector<std::size_t>& indices) {
  std::vector<std::uint32_t> ids;
  ids.reserve(indices.size());
  for (std::size_t index : indices)
    ids.push_back(spans.at(index).span_id[7] | spans.at(index).span_id[6] << 8);
  return ids;
}
std::vector<std::uint32_t> SegmentIds(const std::vector<tracing::Span>& spans, const CriticalPath& path) {
  std::vector<std::size_t> indices;
  indices.reserve(path.segments.size());
  for (const PathSegment& segment : path.segments) indices.push_back(segment.span_index);
  return Ids(spans, indices);
}

TEST(TraceviewCriticalPathTest, EmptyInputHasNoPath) {
  const CriticalPath path = ComputeCriticalPath({});
  EXPECT_TRUE(path.span_indices.empty());
  EXPECT_TRUE(path.segments.empty());
  EXPECT_EQ(path.ms, 0);
}

// op 1 [0,100] → job 2 [5,90] → stages 1 [10,30], 2 [10,50], 3 [50,80] (parents 1 and 2).
// From stage 3 the parent that finished last is 2 (50 > 30); stage 2 has no parents.
//   path: op 1, job 2, stage 2 (id 12), stage 3 (id 13); segments 12 [10,50], 13 [50,80]; 70 ms.
TEST(TraceviewCriticalPathTest, DiamondFollowsTheParentThatEndedLast) {
  const std::vector<tracing::Span> spans = {
      Stage(13, 2, 3, 50, 80, std::vector<std::string>{"1", "2"}),
      Operation(1, 0, 100),
      Job(2, 1, 5, 90),
      Stage(11, 2, 1, 10, 30, std::vector<std::string>{}),
      Stage(12, 2, 2, 10, 50, std::vector<std::string>{}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_TRUE(path.stage_dependencies_known);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{1, 2, 12, 13}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{12, 13}));
  EXPECT_EQ(path.segments[0].start_ms, static_cast<double>(kOriginMs + 10));
  EXPECT_EQ(path.segments[1].end_ms, static_cast<double>(kOriginMs + 80));
  EXPECT_EQ(path.ms, 70);
}

// Stage 5 [20,40] waits on parent 4, which was skipped (no span): the walk stops at stage 5.
// Stage 3 [5,15] is in the job but no parent of 5: off the path. 20 ms.
TEST(TraceviewCriticalPathTest, SkippedParentEndsTheWalk) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 50),
      Job(2, 1, 0, 45),
      Stage(13, 2, 3, 5, 15, std::vector<std::string>{}),
      Stage(15, 2, 5, 20, 40, std::vector<std::string>{"4"}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{15}));
  EXPECT_EQ(path.ms, 20);
}

// job 2 [5,60] runs stage 0 [10,30]; job 3 [40,70] runs stage 1 [45,65] whose parent is stage 0.
// Jobs: from job 3 (ends last), nothing ends by its start 40 (+1) → job 2 is off the path, but its
// stage 0 is on it, as the parent of stage 1.  segments 20 [10,30], 21 [45,65]; 40 ms.
TEST(TraceviewCriticalPathTest, ParentStageInAnEarlierJob) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 80),
      Job(2, 1, 5, 60),
      Job(3, 1, 40, 70),
      Stage(20, 2, 0, 10, 30, std::vector<std::string>{}),
      Stage(21, 3, 1, 45, 65, std::vector<std::string>{"0"}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{1, 20, 3, 21}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{20, 21}));
  EXPECT_EQ(path.ms, 40);
}

// Stage 0 ran twice: attempt 0 [10,20] failed, attempt 1 [22,30]; stage 1 [32,40] follows the
// latest attempt.  segments: attempt 1 (31), stage 1 (32); 8 + 8 = 16 ms.
TEST(TraceviewCriticalPathTest, RetriedParentFollowsItsLatestAttempt) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 50),
      Job(2, 1, 5, 45),
      Stage(30, 2, 0, 10, 20, std::vector<std::string>{}, 0),
      Stage(31, 2, 0, 22, 30, std::vector<std::string>{}, 1),
      Stage(32, 2, 1, 32, 40, std::vector<std::string>{"0"}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{31, 32}));
  EXPECT_EQ(path.ms, 16);
}

// Jobs without stages in op [0,100]: 2 [10,30], 3 [32,50], 4 [40,90].
// From job 4 (ends 90): ends by 41 → job 2 (30; job 3 ends 50). From job 2: nothing by 11.
//   path: op 1, job 2, job 4; segments 2 [10,30], 4 [40,90]; 20 + 50 = 70 ms.
TEST(TraceviewCriticalPathTest, SequentialJobsChainByEndBeforeStart) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 100),
      Job(2, 1, 10, 30),
      Job(3, 1, 32, 50),
      Job(4, 1, 40, 90),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_TRUE(path.stage_dependencies_known);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{1, 2, 4}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{2, 4}));
  EXPECT_EQ(path.ms, 70);
}

// Job 2 [0,20.5] ends 0.5 ms after job 3 [20,40] starts; within the 1 ms slack it still ran
// before it: both on the path, segments of 20.5 and 20 ms whose union is [0,40], 40 ms.
TEST(TraceviewCriticalPathTest, OneMillisecondSlack) {
  const std::vector<tracing::Span> spans = {Operation(1, 0, 50), Job(2, 1, 0, 20.5), Job(3, 1, 20, 40)};
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{2, 3}));
  EXPECT_DOUBLE_EQ(path.ms, 40);
}

// Operations A 1 [0,40] (job 11 [5,35]), C 3 [10,45] (no jobs), B 2 [50,90] (job 12 [55,85]).
// From B (ends 90): ends by 51 → C (45 > A's 40). From C: nothing ends by 11. A is off the path.
//   segments: C itself [10,45] (no jobs), job 12 [55,85]; 35 + 30 = 65 ms.
TEST(TraceviewCriticalPathTest, TwoOperationsAndOneWithoutJobs) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 40), Job(11, 1, 5, 35), Operation(3, 10, 45), Operation(2, 50, 90), Job(12, 2, 55, 85),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{3, 2, 12}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{3, 12}));
  EXPECT_EQ(path.ms, 65);
}

// Sequential operations A [0,40] and B [40,90], each with one job: both on the path.
TEST(TraceviewCriticalPathTest, SequentialOperations) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 40),
      Job(11, 1, 5, 35),
      Operation(2, 40, 90),
      Job(12, 2, 45, 85),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{1, 11, 2, 12}));
  EXPECT_EQ(path.ms, 30 + 40);
}

// The diamond again, with stage 1 lacking spark.stage.parent_ids: stages are left out, the path
// is op 1 → job 2, and the job is the segment (85 ms).
TEST(TraceviewCriticalPathTest, UnknownParentIdsLeaveStagesOut) {
  const std::vector<tracing::Span> spans = {
      Operation(1, 0, 100),
      Job(2, 1, 5, 90),
      Stage(11, 2, 1, 10, 30, std::nullopt),
      Stage(12, 2, 2, 10, 50, std::vector<std::string>{}),
      Stage(13, 2, 3, 50, 80, std::vector<std::string>{"1", "2"}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_FALSE(path.stage_dependencies_known);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{2}));
  EXPECT_EQ(path.ms, 85);
}

// An application's trace has no operations: its jobs are the units. Jobs 2 [0,10] and 3 [12,20]
// (stages 0 [1,9] and 1 [13,19], parent 0) under the application root 1 [0,30].
//   path: job 2, stage 0 (20), job 3, stage 1 (21); segments 20, 21; 8 + 6 = 14 ms.
TEST(TraceviewCriticalPathTest, ApplicationJobsAreTheUnits) {
  const std::vector<tracing::Span> spans = {
      MakeSpan("spark.application", 1, 0, 0, 30),
      Job(2, 1, 0, 10),
      Job(3, 1, 12, 20),
      Stage(20, 2, 0, 1, 9, std::vector<std::string>{}),
      Stage(21, 3, 1, 13, 19, std::vector<std::string>{"0"}),
  };
  const CriticalPath path = ComputeCriticalPath(spans);
  EXPECT_EQ(Ids(spans, path.span_indices), (std::vector<std::uint32_t>{2, 20, 3, 21}));
  EXPECT_EQ(SegmentIds(spans, path), (std::vector<std::uint32_t>{20, 21}));
  EXPECT_EQ(path.ms, 14);
}

}  // namespace
}  // namespace sparktrace::traceview
