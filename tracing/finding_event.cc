#include "tracing/finding_event.h"

#include <algorithm>

#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing {
namespace {

constexpr std::string_view kSummarisesRelation = "summarises ";

std::string TextOf(const std::vector<Attribute>& attributes, std::string_view key) {
  const auto* value = AttributeValueOf<std::string>(attributes, key);
  return value == nullptr ? std::string() : *value;
}

std::vector<std::string> ListOf(const std::vector<Attribute>& attributes, std::string_view key) {
  const auto* values = AttributeValueOf<std::vector<std::string>>(attributes, key);
  return values == nullptr ? std::vector<std::string>() : *values;
}

}  // namespace

bool FindingEvent::IsSummary() const {
  return std::any_of(related.begin(), related.end(),
                     [](const std::string& link) { return link.starts_with(kSummarisesRelation); });
}

SpanEvent EncodeFindingEvent(const FindingEvent& finding, std::uint64_t time_unix_nano) {
  SpanEvent event;
  event.name = std::string(kFindingEventName);
  event.time_unix_nano = time_unix_nano;
  event.attributes = {
      {std::string(kFindingIdKey), finding.id},
      {std::string(kFindingKeyKey), finding.key},
      {std::string(kFindingSeverityKey), finding.severity},
      {std::string(kFindingScopeKey), finding.scope},
      {std::string(kFindingTitleKey), finding.title},
      {std::string(kFindingImpactSecondsKey), finding.impact_seconds},
      {std::string(kFindingRecipeKey), finding.recipe},
      {std::string(kFindingFixKey), finding.fix},
      {std::string(kFindingEvidenceKey), finding.evidence},
  };
  if (!finding.related.empty())
    event.attributes.push_back({std::string(kFindingRelatedKey), finding.related});
  if (finding.suppressed) {
    event.attributes.push_back({std::string(kFindingSuppressedReasonKey), finding.suppressed->reason});
    event.attributes.push_back({std::string(kFindingSuppressedUntilKey), finding.suppressed->until});
  }
  return event;
}

std::optional<FindingEvent> DecodeFindingEvent(const SpanEvent& event) {
  if (event.name != kFindingEventName) return std::nullopt;
  return DecodeFindingAttributes(event.attributes);
}

FindingEvent DecodeFindingAttributes(const std::vector<Attribute>& attributes) {
  FindingEvent finding;
  finding.id = TextOf(attributes, kFindingIdKey);
  finding.key = TextOf(attributes, kFindingKeyKey);
  finding.severity = TextOf(attributes, kFindingSeverityKey);
  finding.scope = TextOf(attributes, kFindingScopeKey);
  finding.title = TextOf(attributes, kFindingTitleKey);
  if (const auto* impact = AttributeValueOf<double>(attributes, kFindingImpactSecondsKey)) {
    finding.impact_seconds = *impact;
  } else if (const auto* whole = AttributeValueOf<std::int64_t>(attributes, kFindingImpactSecondsKey)) {
    finding.impact_seconds = static_cast<double>(*whole);  // a JSON round trip may drop the fraction
  }
  finding.recipe = TextOf(attributes, kFindingRecipeKey);
  finding.fix = ListOf(attributes, kFindingFixKey);
  finding.evidence = ListOf(attributes, kFindingEvidenceKey);
  finding.related = ListOf(attributes, kFindingRelatedKey);
  // Presence, not content, marks a suppressed finding (the store has counted it so since the keys
  // were added); a reason that is not a string still does.
  const bool has_reason = std::any_of(attributes.begin(), attributes.end(), [](const Attribute& attribute) {
    return attribute.key == kFindingSuppressedReasonKey;
  });
  if (has_reason) {
    finding.suppressed = FindingEventSuppression{TextOf(attributes, kFindingSuppressedReasonKey),
                                                 TextOf(attributes, kFindingSuppressedUntilKey)};
  }
  return finding;
}

}  // namespace sparktrace::tracing
