#include "traceview/attempt_spans.h"

#include <charconv>
#include <string>
#include <unordered_map>

#include "tracing/well_known_attributes.h"

namespace sparktrace::traceview {
namespace {

std::optional<std::int64_t> IntegerAttribute(const tracing::Span& span, std::string_view key) {
  if (const auto* number = tracing::AttributeValueOf<std::int64_t>(span.attributes, key)) return *number;
  if (const auto* text = tracing::AttributeValueOf<std::string>(span.attributes, key)) {
    std::int64_t parsed = 0;
    const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), parsed);
    if (ec == std::errc() && end == text->data() + text->size()) return parsed;
  }
  return std::nullopt;
}

std::string SpanKey(const tracing::SpanId& id) { return std::string(id.begin(), id.end()); }

}  // namespace

std::optional<tracing::TaskAttemptKey> IdentityOf(const tracing::Span& span) {
  const auto* dag = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowDagIdKey);
  const auto* task = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowTaskIdKey);
  if (dag == nullptr || task == nullptr) return std::nullopt;
  tracing::TaskAttemptKey key;
  key.dag_id = *dag;
  key.task_id = *task;
  if (const auto* run = tracing::AttributeValueOf<std::string>(span.attributes, tracing::kAirflowRunIdKey)) {
    key.run_id = *run;
  }
  key.try_number = IntegerAttribute(span, tracing::kAirflowTryNumberKey).value_or(1);
  key.map_index = IntegerAttribute(span, "airflow.map_index").value_or(-1);
  return key;
}

std::vector<tracing::Span> SpansOfAttempt(std::vector<tracing::Span> trace,
                                          const tracing::TaskAttemptKey& attempt) {
  std::unordered_map<std::string, std::size_t> index_of;
  index_of.reserve(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) index_of.emplace(SpanKey(trace[i].span_id), i);
  // 1: belongs, 0: does not, -1: not decided yet. Decided once per span, walking up to the nearest
  // span with an identity; the walk is bounded so that a corrupt parent cycle cannot loop.
  std::vector<int> belongs(trace.size(), -1);
  std::vector<std::size_t> path;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    path.clear();
    std::optional<std::size_t> current = i;
    int verdict = 0;
    for (std::size_t steps = 0; current && steps <= trace.size(); ++steps) {
      if (belongs[*current] != -1) {
        verdict = belongs[*current];
        break;
      }
      path.push_back(*current);
      if (auto identity = IdentityOf(trace[*current])) {
        verdict = *identity == attempt ? 1 : 0;
        break;
      }
      const auto parent = index_of.find(SpanKey(trace[*current].parent_span_id));
      current = parent == index_of.end() ? std::nullopt : std::optional<std::size_t>(parent->second);
    }
    for (std::size_t member : path) belongs[member] = verdict;
  }
  std::vector<tracing::Span> selected;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    if (belongs[i] == 1) selected.push_back(std::move(trace[i]));
  }
  return selected;
}

}  // namespace sparktrace::traceview
