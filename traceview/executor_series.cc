#include "traceview/executor_series.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>

#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using diagnose::cost::ClampedExecutorCount;
using diagnose::cost::ExecutorFact;

std::optional<std::int64_t> NonNegative(const std::int64_t* value) {
  if (value == nullptr) return std::nullopt;
  return std::max<std::int64_t>(*value, 0);
}

std::vector<ExecutorFact> FactsOf(std::span<const tracing::Span> spans) {
  std::vector<ExecutorFact> facts;
  for (const tracing::Span& span : spans) {
    if (const auto* at_start =
            tracing::AttributeValueOf<std::int64_t>(span.attributes, tracing::kExecutorsActiveAtStart)) {
      const std::optional<std::int64_t> cores = NonNegative(
          tracing::AttributeValueOf<std::int64_t>(span.attributes, tracing::kExecutorCoresAtStart));
      const int count = ClampedExecutorCount(*at_start);
      facts.push_back({SpanStartMs(span), false, count, count, cores, cores});
    }
    for (const tracing::SpanEvent& event : span.events) {
      const bool added = event.name == tracing::kExecutorAddedEvent;
      if (!added && event.name != tracing::kExecutorRemovedEvent) continue;
      const auto* active =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorsActive);
      if (active == nullptr) continue;
      const std::int64_t before = added ? *active - 1 : *active + 1;
      ExecutorFact fact{NanosToMs(event.time_unix_nano), true, ClampedExecutorCount(*active),
                        ClampedExecutorCount(before),    {},   {}};
      const auto* cores =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorCoresActive);
      const auto* changed =
          tracing::AttributeValueOf<std::int64_t>(event.attributes, tracing::kExecutorCores);
      if (cores != nullptr && changed != nullptr) {
        fact.cores = std::max<std::int64_t>(*cores, 0);
        fact.cores_before = std::max<std::int64_t>(added ? *cores - *changed : *cores + *changed, 0);
      }
      facts.push_back(fact);
    }
  }
  return facts;
}

}  // namespace

ExecutorSeries ComputeExecutorSeries(std::span<const tracing::Span> spans, double start_ms, double end_ms) {
  return diagnose::cost::ExecutorSeriesOfFacts(FactsOf(spans), start_ms, end_ms);
}

}  // namespace sparktrace::traceview
