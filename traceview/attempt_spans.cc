#include "traceview/attempt_spans.h"

#include <string>

#include "traceview/span_lanes.h"
#include "traceview/span_parents.h"
#include "tracing/nearest_owner.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
std::optional<tracing::store::TaskAttemptKey> IdentityOf(const tracing::Span& span) {
  const auto* dag = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowDagIdKey);
  const auto* task = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowTaskIdKey);
  if (dag == nullptr || task == nullptr) return std::nullopt;
  tracing::store::TaskAttemptKey key;
  key.dag_id = *dag;
  key.task_id = *task;
  if (const auto* run = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowRunIdKey)) {
    key.run_id = *run;
  }
  key.try_number = IntAttribute(span, tracing::kAirflowTryNumberKey).value_or(1);
  key.map_index = IntAttribute(span, tracing::kAirflowMapIndexKey).value_or(-1);
  return key;
}

std::vector<tracing::Span> SpansOfAttempt(std::vector<tracing::Span> trace,
                                          const tracing::store::TaskAttemptKey& attempt) {
  const std::vector<std::optional<std::size_t>> parents = ParentIndices(trace);
  std::vector<std::optional<tracing::store::TaskAttemptKey>> identities;
  identities.reserve(trace.size());
  for (const tracing::Span& span : trace) identities.push_back(IdentityOf(span));
  const auto owners = tracing::NearestOwners(
      trace.size(), [&](std::size_t i) { return parents[i]; },
      [&](std::size_t i) { return identities[i].has_value(); });
  std::vector<tracing::Span> selected;
  selected.reserve(trace.size());  // mostly the whole trace: moved once, not at every doubling
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (owners[i] && *identities[*owners[i]] == attempt) selected.push_back(std::move(trace[i]));
  }
  return selected;
}

}  // namespace sparktrace::traceview
