// increment/part_increment.h: what a batch changes in the parts of a stored trace, without its other
// spans, and when it must say it cannot tell.
#include "tracing/store/increment/part_increment.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::store::task_index {
namespace {

const TaskAttemptKey kLoadAttempt{"etl", "load", "scheduled__1", 1, -1};

// What the index keeps of a trace made of `spans`, as a recompute writes it.
StoredTraceIndex IndexOfStoredSpans(const std::map<std::string, IndexSpan>& spans) {
  std::vector<IndexSpan> all;
  for (const auto& [id, span] : spans) all.push_back(span);
  StoredTraceIndex index;
  index.parts = PartsOfTrace("t", all);
  index.awaited = AwaitedParentsOf(all);
  index.exact = true;
  return index;
}

IndexSpan IndexSpanNamed(std::string id, std::string parent, std::string name, std::uint64_t start,
                         std::uint64_t end) {
  IndexSpan span;
  span.span_id = std::move(id);
  span.parent_id = std::move(parent);
  span.name = std::move(name);
  span.start = start;
  span.end = end;
  return span;
}

// A trace with the operation `op` of kLoadAttempt (10-100) and one RPC below it, as stored.
struct StoredLoadTrace {
  IndexSpan operation = [] {
    IndexSpan span = IndexSpanNamed("op", "", std::string(kSparkConnectOperationSpanName), 10, 100);
    span.identity = kLoadAttempt;
    return span;
  }();
  std::map<std::string, IndexSpan> spans{{"op", operation},
                                         {"rpc", IndexSpanNamed("rpc", "op", "rpc", 20, 30)}};

  StoredTraceIndex Index() const { return IndexOfStoredSpans(spans); }
  StoredSpanById Lookup() const {
    return [this](const std::string& id) -> Result<std::optional<IndexSpan>> {
      const auto found = spans.find(id);
      if (found == spans.end()) return std::optional<IndexSpan>();
      return std::optional<IndexSpan>(found->second);
    };
  }
};

TEST(PartIncrement, NewSpansBelowAStoredOwnerAddToItsPart) {
  StoredLoadTrace stored;
  IndexSpan job = IndexSpanNamed("job", "op", std::string(kSparkJobSpanName), 40, 140);
  job.error = true;
  IndexSpan phase = IndexSpanNamed("phase", "job", std::string(kSparkPhasePrefix) + "compute", 45, 60);
  phase.phase_duration_ms = 15;
  auto next = IncrementTrace(stored.Index(), {{job, std::nullopt}, {phase, std::nullopt}}, stored.Lookup());
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  const Part& part = (*next)->parts.at(PartKey{true, kLoadAttempt, ""});
  EXPECT_EQ(part.spans, 4);
  EXPECT_EQ(part.end, 140u);
  // An operation that did not fail decides: a failed job below it is not a failed task.
  EXPECT_EQ(part.Errors(), 0);
  EXPECT_EQ(part.failed_jobs, 1);
  EXPECT_EQ(part.phase_ms[static_cast<std::size_t>(SparkPhase::kCompute)], 15);
  EXPECT_TRUE((*next)->awaited.empty());
  EXPECT_EQ((*next)->changed.size(), 1u);

  // The same as recomputing the whole trace.
  stored.spans.emplace("job", job);
  stored.spans.emplace("phase", phase);
  const auto whole = stored.Index().parts.at(PartKey{true, kLoadAttempt, ""});
  EXPECT_EQ(whole.spans, part.spans);
  EXPECT_EQ(whole.end, part.end);
  EXPECT_EQ(whole.failed_jobs, part.failed_jobs);
  EXPECT_EQ(whole.phase_ms, part.phase_ms);
}

TEST(PartIncrement, AReplacedSpanTakesItsOldVersionOut) {
  StoredLoadTrace stored;
  IndexSpan running = stored.operation;
  running.open = true;
  stored.spans["op"] = running;
  IndexSpan failed = stored.operation;
  failed.error = true;
  failed.end = 120;
  auto next = IncrementTrace(stored.Index(), {{failed, running}}, stored.Lookup());
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  const Part& part = (*next)->parts.at(PartKey{true, kLoadAttempt, ""});
  EXPECT_EQ(part.spans, 2);
  EXPECT_EQ(part.open, 0);
  EXPECT_EQ(part.Errors(), 1);
  EXPECT_EQ(part.end, 120u);
}

TEST(PartIncrement, SaysItCannotTellWhenOnlyTheWholeTraceCan) {
  StoredLoadTrace stored;
  const auto cannot = [&stored](const StoredTraceIndex& index, const std::vector<BatchSpan>& batch) {
    auto next = IncrementTrace(index, batch, stored.Lookup());
    return next.ok() && !next->has_value();
  };
  const IndexSpan orphan = IndexSpanNamed("orphan", "missing", "stage", 50, 60);
  // A stored span waits for its parent: the batch brings it.
  stored.spans.emplace("orphan", orphan);
  EXPECT_TRUE(cannot(stored.Index(), {{IndexSpanNamed("missing", "op", "job", 40, 70), std::nullopt}}));
  stored.spans.erase("orphan");
  // Counts the index had not kept, or parents it does not know are awaited.
  StoredTraceIndex old = stored.Index();
  old.exact = false;
  EXPECT_TRUE(cannot(old, {{IndexSpanNamed("x", "op", "rpc", 40, 50), std::nullopt}}));
  StoredTraceIndex unknown = stored.Index();
  unknown.awaited.reset();
  EXPECT_TRUE(cannot(unknown, {{IndexSpanNamed("x", "op", "rpc", 40, 50), std::nullopt}}));
  // A replaced span whose end moves in held the part's end.
  IndexSpan shorter = stored.operation;
  shorter.end = 90;
  EXPECT_TRUE(cannot(stored.Index(), {{shorter, stored.operation}}));
  // A replaced span that moves elsewhere in the tree.
  IndexSpan moved = stored.spans.at("rpc");
  moved.parent_id = "elsewhere";
  EXPECT_TRUE(cannot(stored.Index(), {{moved, stored.spans.at("rpc")}}));
  // Findings are counted once per key, and the keys are not kept.
  IndexSpan with_finding = IndexSpanNamed("f", "op", "stage", 40, 50);
  with_finding.finding_events = "[]";
  EXPECT_TRUE(cannot(stored.Index(), {{with_finding, std::nullopt}}));
}

TEST(PartIncrement, ASpanUnderAMissingParentWaitsAndOtherBatchesStayIncremental) {
  StoredLoadTrace stored;
  const IndexSpan late = IndexSpanNamed("late", "not-yet", "stage", 40, 50);
  auto next = IncrementTrace(stored.Index(), {{late, std::nullopt}}, stored.Lookup());
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ((*next)->awaited, AwaitedParents{"not-yet"});
  EXPECT_EQ((*next)->parts.at(PartKey{true, kLoadAttempt, ""}).spans, 2);

  // Stored, it waits; a batch without its parent is still added up from itself alone.
  stored.spans.emplace("late", late);
  ASSERT_EQ(stored.Index().awaited, AwaitedParents{"not-yet"});
  auto other = IncrementTrace(stored.Index(), {{IndexSpanNamed("rpc2", "op", "rpc", 60, 70), std::nullopt}},
                              stored.Lookup());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(other->has_value());
  EXPECT_EQ((*other)->parts.at(PartKey{true, kLoadAttempt, ""}).spans, 3);
  EXPECT_EQ((*other)->awaited, AwaitedParents{"not-yet"});
}

TEST(PartIncrement, AwaitedParentsAreOnlyThoseThatCanStillAdoptASpan) {
  IndexSpan owner = IndexSpanNamed("op", "", "op", 1, 2);
  owner.identity = kLoadAttempt;
  const std::vector<IndexSpan> spans = {owner,
                                        IndexSpanNamed("a", "op", "x", 1, 2),
                                        IndexSpanNamed("root", "", "x", 1, 2),
                                        IndexSpanNamed("b", "root", "x", 1, 2),
                                        IndexSpanNamed("c", "gone", "x", 1, 2),
                                        IndexSpanNamed("d", "c", "x", 1, 2)};
  EXPECT_EQ(AwaitedParentsOf(spans), AwaitedParents{"gone"});  // c's and d's; b's root waits for nothing
  EXPECT_TRUE(AwaitedParentsOf({IndexSpanNamed("c", "gone", "x", 1, 2)}).empty());  // no identity: one part
  EXPECT_EQ(ParseAwaitedParents(*AwaitedParentsText({"a1", "b2"})), (AwaitedParents{"a1", "b2"}));
  EXPECT_TRUE(ParseAwaitedParents("").empty());
  AwaitedParents many;
  for (std::size_t i = 0; i <= kMaxAwaitedParents; ++i) many.insert(std::to_string(i));
  EXPECT_FALSE(AwaitedParentsText(many));  // stored as unknown: the trace is recomputed
}

}  // namespace
}  // namespace sparktrace::tracing::store::task_index

namespace sparktrace::tracing::store::task_index {
namespace {

// A Spark application's trace without Airflow identity: one part, named by the application.
struct StoredApplicationTrace {
  std::map<std::string, IndexSpan> spans = [] {
    IndexSpan application = IndexSpanNamed("app", "", std::string(kSparkApplicationSpanName), 10, 100);
    application.app_name = "nightly";
    application.app_id = "app-1";
    application.open = true;
    return std::map<std::string, IndexSpan>{{"app", application},
                                            {"job", IndexSpanNamed("job", "app", "spark.job", 20, 40)}};
  }();
  StoredTraceIndex Index() const { return IndexOfStoredSpans(spans); }
};

TEST(PartIncrement, ATraceWithoutIdentityTakesEveryNewSpanIntoItsOnePart) {
  StoredApplicationTrace stored;
  IndexSpan finished = stored.spans.at("app");
  finished.open = false;
  finished.end = 150;
  IndexSpan orphan = IndexSpanNamed("stage", "not-yet", "spark.stage", 30, 35);  // no parent: still in
  auto next = IncrementTrace(stored.Index(), {{finished, stored.spans.at("app")}, {orphan, std::nullopt}},
                             [](const std::string&) -> Result<std::optional<IndexSpan>> {
                               ADD_FAILURE() << "a trace without identity needs no walk up";
                               return std::optional<IndexSpan>();
                             });
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->has_value());
  ASSERT_EQ((*next)->parts.size(), 1u);
  const auto& [key, part] = *(*next)->parts.begin();
  EXPECT_FALSE(key.airflow);
  EXPECT_EQ(part.name, "nightly");
  EXPECT_EQ(part.spans, 3);
  EXPECT_EQ(part.open, 0);
  EXPECT_EQ(part.end, 150u);

  stored.spans.emplace("stage", orphan);
  stored.spans["app"] = finished;
  EXPECT_EQ(stored.Index().parts.begin()->second.spans, part.spans);
}

TEST(PartIncrement, ATraceWithoutIdentityIsRecomputedWhenItMayGetOneOrANewName) {
  StoredApplicationTrace stored;
  const auto cannot = [&stored](const std::vector<BatchSpan>& batch) {
    auto next = IncrementTrace(
        stored.Index(), batch,
        [](const std::string&) -> Result<std::optional<IndexSpan>> { return std::optional<IndexSpan>(); });
    return next.ok() && !next->has_value();
  };
  IndexSpan with_identity = IndexSpanNamed("op", "app", "op", 30, 40);
  with_identity.identity = TaskAttemptKey{"etl", "load", "r", 1, -1};
  EXPECT_TRUE(cannot({{with_identity, std::nullopt}}));
  EXPECT_TRUE(cannot({{IndexSpanNamed("root2", "", "other", 5, 6), std::nullopt}}));  // an earlier root
  IndexSpan named = IndexSpanNamed("app2", "app", std::string(kSparkApplicationSpanName), 30, 40);
  named.app_name = "renamed";
  EXPECT_TRUE(cannot({{named, std::nullopt}}));
  IndexSpan moved_root = stored.spans.at("app");
  moved_root.start = 5;
  EXPECT_TRUE(cannot({{moved_root, stored.spans.at("app")}}));
}

}  // namespace
}  // namespace sparktrace::tracing::store::task_index
