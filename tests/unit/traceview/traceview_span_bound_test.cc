// The bound on an answer's span list (traceview/span_bound.h) and the cache of built answers
// (traceview/answer_cache.h).

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "admin/http_caching.h"
#include "traceview/answer_cache.h"
#include "traceview/span_bound.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

using tracing::Span;

constexpr std::uint64_t kBoundTestBase = 1'764'050'400'000'000'000ULL;
constexpr std::uint64_t kBoundTestMs = 1'000'000ULL;

Span BoundTestSpan(std::string name, std::uint64_t start_ms, std::uint64_t end_ms, bool failed = false) {
  Span span;
  span.name = std::move(name);
  span.start_time_unix_nano = kBoundTestBase + start_ms * kBoundTestMs;
  span.end_time_unix_nano = kBoundTestBase + end_ms * kBoundTestMs;
  if (failed) span.status_code = tracing::StatusCode::kError;
  return span;
}

// A tree of 0 (root) > 1 > 2 and 0 > 3, then lone roots 4..9 (4 failed, 5 the longest).
struct BoundTestAttempt {
  std::vector<Span> spans;
  std::vector<std::optional<std::size_t>> parent;
  std::vector<std::size_t> order;
  std::vector<int> depth;
  std::vector<bool> has_children;

  BoundTestAttempt() {
    spans = {BoundTestSpan("operation", 0, 100), BoundTestSpan("job", 10, 50), BoundTestSpan("stage", 10, 40),
             BoundTestSpan("job", 60, 90)};
    parent = {std::nullopt, 0, 1, 0};
    depth = {0, 1, 2, 1};
    has_children = {true, true, false, false};
    for (std::uint64_t n = 4; n < 10; ++n) {
      spans.push_back(BoundTestSpan("Config", n * 10, n * 10 + (n == 5 ? 9 : 1), n == 4));
      parent.push_back(std::nullopt);
      depth.push_back(0);
      has_children.push_back(false);
    }
    order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  }
};

TEST(SpanBound, ListsTheShapeFirstThenFailedAndLongLoneCalls) {
  const BoundTestAttempt attempt;
  const std::vector<bool> pinned(attempt.spans.size(), false);
  const BoundedSpans bounded = BoundSpans(attempt.spans, attempt.parent, attempt.order, attempt.depth,
                                          attempt.has_children, pinned, 6, 0, 100);
  EXPECT_EQ(bounded.order, (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  ASSERT_EQ(bounded.groups.size(), 1u);
  const SpanGroup& group = bounded.groups[0];
  EXPECT_EQ(group.name, "Config");
  EXPECT_EQ(group.count, 4);
  EXPECT_EQ(group.error_count, 0);
  EXPECT_DOUBLE_EQ(group.busy_ms, 4.0);
  ASSERT_EQ(group.buckets.size(), kSpanGroupBuckets);
  std::int64_t starts = 0;
  for (const std::int64_t slice : group.buckets) starts += slice;
  EXPECT_EQ(starts, 4);
}

TEST(SpanBound, APinnedSpanBringsItsAncestorsPastTheBound) {
  const BoundTestAttempt attempt;
  std::vector<bool> pinned(attempt.spans.size(), false);
  pinned[2] = true;  // the stage: on the critical path
  const BoundedSpans bounded = BoundSpans(attempt.spans, attempt.parent, attempt.order, attempt.depth,
                                          attempt.has_children, pinned, 1, 0, 100);
  // The root fills the bound; the stage is pinned and its job comes with it.
  EXPECT_EQ(bounded.order, (std::vector<std::size_t>{0, 1, 2}));
  std::int64_t summarised = 0;
  for (const SpanGroup& group : bounded.groups) summarised += group.count;
  EXPECT_EQ(summarised, 7);
}

TEST(SpanBound, NoBoundOrRoomEnoughListsEverything) {
  const BoundTestAttempt attempt;
  const std::vector<bool> pinned(attempt.spans.size(), false);
  for (const std::size_t bound : {std::size_t{0}, std::size_t{10}, std::size_t{100}}) {
    const BoundedSpans bounded = BoundSpans(attempt.spans, attempt.parent, attempt.order, attempt.depth,
                                            attempt.has_children, pinned, bound, 0, 100);
    EXPECT_EQ(bounded.order, attempt.order) << bound;
    EXPECT_TRUE(bounded.groups.empty()) << bound;
  }
}

TEST(AnswerCache, KeepsAnswersWithinItsBoundLeastRecentlyUsedFirstOut) {
  AnswerCache cache(250);
  EXPECT_FALSE(cache.Keeps(251));
  EXPECT_EQ(cache.Find("\"a\""), nullptr);
  cache.Put("\"a\"", std::string(100, 'a'));
  cache.Put("\"b\"", std::string(100, 'b'));
  ASSERT_NE(cache.Find("\"a\""), nullptr);  // a is now the most recent
  cache.Put("\"c\"", std::string(100, 'c'));
  EXPECT_EQ(cache.Find("\"b\""), nullptr);  // dropped: least recently used
  ASSERT_NE(cache.Find("\"a\""), nullptr);
  EXPECT_EQ(*cache.Find("\"c\""), std::string(100, 'c'));
  EXPECT_LE(cache.bytes(), 250u);
  EXPECT_FALSE(AnswerCache(0).Keeps(1));
}

TEST(AnswerCache, CompressesOnceAndCountsItsBytes) {
  AnswerCache cache(std::size_t{1} << 20);
  const std::string body = "{\"pad\":\"" + std::string(10'000, 'x') + "\"}";
  cache.Put("\"a\"", body);
  const auto gzipped = cache.Gzipped("\"a\"");
  ASSERT_TRUE(gzipped.has_value());
  EXPECT_EQ(gzipped, admin::Gzip(body));
  EXPECT_EQ(cache.bytes(), body.size() + gzipped->size());
  EXPECT_EQ(cache.Gzipped("\"a\""), gzipped);
  EXPECT_FALSE(cache.Gzipped("\"missing\"").has_value());
}

}  // namespace
}  // namespace sparktrace::traceview
