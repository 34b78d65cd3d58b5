#include "tracing/finding_event.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing {
namespace {

FindingEvent SkewFinding() {
  return FindingEvent{.id = "data-skew",
                      .key = "data-skew@stage:3.0",
                      .severity = "warning",
                      .scope = "stage job 2 stage 3.0",
                      .title = "one task ran 12x the median",
                      .impact_seconds = 4.5,
                      .recipe = "docs/recipes/troubleshoot/data-skew.md",
                      .fix = {"spark.sql.adaptive.skewJoin.enabled=true"},
                      .evidence = {"max_task_ms=1200 ms (>= 1000)"},
                      .related = {"causes oom-and-spill@stage:3.0"},
                      .suppressed = std::nullopt};
}

std::vector<std::string> Keys(const SpanEvent& event) {
  std::vector<std::string> keys;
  for (const Attribute& attribute : event.attributes) keys.push_back(attribute.key);
  return keys;
}

TEST(FindingEventTest, EncodesTheAttributesInTheirFixedOrder) {
  const SpanEvent event = EncodeFindingEvent(SkewFinding(), 42);
  EXPECT_EQ(event.name, kFindingEventName);
  EXPECT_EQ(event.time_unix_nano, 42u);
  EXPECT_EQ(Keys(event),
            (std::vector<std::string>{"finding.id", "finding.key", "finding.severity", "finding.scope",
                                      "finding.title", "finding.impact_seconds", "finding.recipe",
                                      "finding.fix", "finding.evidence", "finding.related"}));
  ASSERT_NE(AttributeValueOf<double>(event.attributes, kFindingImpactSecondsKey), nullptr);
}

TEST(FindingEventTest, LeavesOutAnEmptyRelatedListAndWritesBothSuppressionKeys) {
  FindingEvent finding = SkewFinding();
  finding.related.clear();
  finding.suppressed = FindingEventSuppression{"known", "2026-12-31"};
  const std::vector<std::string> keys = Keys(EncodeFindingEvent(finding, 0));
  EXPECT_EQ(std::count(keys.begin(), keys.end(), "finding.related"), 0);
  EXPECT_EQ(keys.back(), "finding.suppressed_until");
  EXPECT_EQ(keys[keys.size() - 2], "finding.suppressed_reason");
}

TEST(FindingEventTest, RoundTrips) {
  FindingEvent finding = SkewFinding();
  finding.suppressed = FindingEventSuppression{"known", "2026-12-31"};
  const std::optional<FindingEvent> decoded = DecodeFindingEvent(EncodeFindingEvent(finding, 0));
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->id, finding.id);
  EXPECT_EQ(decoded->key, finding.key);
  EXPECT_EQ(decoded->severity, finding.severity);
  EXPECT_EQ(decoded->scope, finding.scope);
  EXPECT_EQ(decoded->title, finding.title);
  EXPECT_DOUBLE_EQ(decoded->impact_seconds, finding.impact_seconds);
  EXPECT_EQ(decoded->recipe, finding.recipe);
  EXPECT_EQ(decoded->fix, finding.fix);
  EXPECT_EQ(decoded->evidence, finding.evidence);
  EXPECT_EQ(decoded->related, finding.related);
  ASSERT_TRUE(decoded->suppressed.has_value());
  EXPECT_EQ(decoded->suppressed->reason, "known");
  EXPECT_EQ(decoded->suppressed->until, "2026-12-31");
}

TEST(FindingEventTest, RoundTripsThroughTheStoredJson) {
  const SpanEvent event = EncodeFindingEvent(SkewFinding(), 0);
  const FindingEvent decoded = DecodeFindingAttributes(
      AttributesFromJson(nlohmann::ordered_json::parse(DumpJson(AttributesToJson(event.attributes)))));
  EXPECT_EQ(decoded.key, "data-skew@stage:3.0");
  EXPECT_DOUBLE_EQ(decoded.impact_seconds, 4.5);
  EXPECT_FALSE(decoded.suppressed.has_value());
}

TEST(FindingEventTest, DecodesOnlyFindingEvents) {
  SpanEvent other = EncodeFindingEvent(SkewFinding(), 0);
  other.name = "exception";
  EXPECT_FALSE(DecodeFindingEvent(other).has_value());
}

TEST(FindingEventTest, ToleratesWhatOlderProducersLeftOut) {
  SpanEvent event;
  event.name = std::string(kFindingEventName);
  event.attributes = {{"finding.id", std::string("gc-pressure")},
                      {"finding.impact_seconds", std::int64_t{3}}};
  const std::optional<FindingEvent> decoded = DecodeFindingEvent(event);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->id, "gc-pressure");
  EXPECT_TRUE(decoded->key.empty());
  EXPECT_DOUBLE_EQ(decoded->impact_seconds, 3.0);
  EXPECT_TRUE(decoded->fix.empty());
  EXPECT_FALSE(decoded->suppressed.has_value());
}

TEST(FindingEventTest, PresenceOfTheReasonMarksASuppressedFinding) {
  SpanEvent event;
  event.name = std::string(kFindingEventName);
  event.attributes = {{"finding.id", std::string("gc-pressure")},
                      {"finding.suppressed_reason", std::string()}};
  const std::optional<FindingEvent> decoded = DecodeFindingEvent(event);
  ASSERT_TRUE(decoded.has_value());
  ASSERT_TRUE(decoded->suppressed.has_value());
  EXPECT_TRUE(decoded->suppressed->reason.empty());
}

// The summary is known by its "summarises" links (slow-spark-jobs always has at least one), so that
// no reader needs the rule's id and spans stored before the codec read the same.
TEST(FindingEventTest, ASummaryIsAFindingThatSummarisesOthers) {
  FindingEvent finding = SkewFinding();
  EXPECT_FALSE(finding.IsSummary());
  finding.related = {"summarises data-skew@stage:3.0", "summarises gc-pressure@operation:op"};
  EXPECT_TRUE(finding.IsSummary());
}

}  // namespace
}  // namespace sparktrace::tracing
