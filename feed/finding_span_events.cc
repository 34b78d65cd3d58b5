#include "feed/finding_span_events.h"

#include <optional>
#include <string>

#include "diagnose/finding_words.h"
#include "tracing/finding_event.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::feed {
namespace {

std::int64_t IntAttribute(const tracing::Span& span, std::string_view key, std::int64_t otherwise) {
  const auto* number = tracing::AttributeValueOf<std::int64_t>(span.attributes, key);
  return number != nullptr ? *number : otherwise;
}

void AddIds(tracing::Span& span, const std::vector<const diagnose::Finding*>& findings) {
  std::vector<std::string> ids;
  std::string joined;
  for (const diagnose::Finding* finding : findings) {
    ids.push_back(finding->id);
    joined += (joined.empty() ? "" : ",") + finding->id;
  }
  span.attributes.push_back({std::string(tracing::kFindingsKey), std::move(ids)});
  span.attributes.push_back({std::string(tracing::kFindingIdsKey), std::move(joined)});
}

}  // namespace

tracing::SpanEvent FindingSpanEvent(const diagnose::Finding& finding, std::uint64_t time_unix_nano) {
  std::vector<std::string> evidence;
  for (const diagnose::Evidence& item : finding.evidence) evidence.push_back(diagnose::EvidenceWords(item));
  std::vector<std::string> related;
  for (const diagnose::RelatedFinding& link : finding.related)
    related.push_back(link.relation + " " + link.key);
  std::optional<tracing::FindingEventSuppression> suppressed;
  if (finding.suppressed) {
    suppressed = tracing::FindingEventSuppression{finding.suppressed->reason, finding.suppressed->until};
  }
  const tracing::FindingEvent event{.id = finding.id,
                                    .key = finding.Key(),
                                    .severity = std::string(diagnose::SeverityName(finding.severity)),
                                    .scope = diagnose::ScopeWords(finding.scope),
                                    .title = finding.title,
                                    .impact_seconds = finding.impact_seconds,
                                    .recipe = finding.recipe,
                                    .fix = finding.fix,
                                    .evidence = std::move(evidence),
                                    .related = std::move(related),
                                    .suppressed = std::move(suppressed)};
  return tracing::EncodeFindingEvent(event, time_unix_nano);
}

bool AttachFindings(std::vector<tracing::Span>& spans, std::string_view holder_name,
                    const std::vector<diagnose::Finding>& findings) {
  tracing::Span* holder = nullptr;
  for (tracing::Span& span : spans) {
    if (span.name == holder_name) holder = &span;
  }
  if (holder == nullptr) return false;
  if (findings.empty()) return true;
  std::vector<const diagnose::Finding*> all;
  for (const diagnose::Finding& finding : findings) {
    holder->events.push_back(FindingSpanEvent(finding, holder->end_time_unix_nano));
    all.push_back(&finding);
  }
  AddIds(*holder, all);
  for (tracing::Span& span : spans) {
    if (span.name != tracing::kSparkStageSpanName) continue;
    const std::int64_t stage_id = IntAttribute(span, tracing::kSparkStageIdKey, -1);
    const std::int64_t attempt = IntAttribute(span, tracing::kSparkStageAttemptKey, 0);
    std::vector<const diagnose::Finding*> own;
    for (const diagnose::Finding& finding : findings) {
      if (finding.scope.kind != diagnose::ScopeKind::kStage || finding.scope.stage_id != stage_id ||
          finding.scope.stage_attempt.value_or(0) != attempt) {
        continue;
      }
      span.events.push_back(FindingSpanEvent(finding, span.end_time_unix_nano));
      own.push_back(&finding);
    }
    if (!own.empty()) AddIds(span, own);
  }
  return true;
}

}  // namespace sparktrace::feed
