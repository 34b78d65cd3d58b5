#include "tracing/store/increment/summary_increment.h"

#include <algorithm>

namespace sparktrace::tracing::store {
namespace {

template <typename T>
void FoldMax(std::optional<T>& into, const std::optional<T>& value) {
  if (value && (!into || *into < *value)) into = value;
}

}  // namespace

SummarySpan SummarySpanOf(const StoredSpanRow& row) {
  SummarySpan span;
  span.root = !row.parent_span_id.has_value();
  span.name = row.name;
  span.start_unix_nano = row.start_unix_nano;
  span.end_unix_nano = row.end_unix_nano;
  span.error = row.status_code == 2;
  const auto text = [](const std::string* value) -> std::optional<std::string> {
    if (value == nullptr) return std::nullopt;
    return *value;
  };
  span.dag_id = text(row.dag_id);
  span.task_id = text(row.task_id);
  span.run_id = text(row.run_id);
  span.try_number = row.try_number;
  return span;
}

std::optional<SummaryChange> SummaryIncrement(std::int64_t stored_start_unix_nano,
                                              std::int64_t stored_end_unix_nano,
                                              const std::vector<SummaryBatchSpan>& batch) {
  SummaryChange change;
  change.end_unix_nano = stored_end_unix_nano;
  for (const SummaryBatchSpan& span : batch) {
    const SummarySpan& now = span.now;
    if (span.before) {
      // The same span again (a running snapshot and its final form): the root, the start and the
      // identity it gave the row stay; the end may only grow, as the row keeps no second-latest end.
      const SummarySpan& before = *span.before;
      if (before.root != now.root || before.name != now.name ||
          before.start_unix_nano != now.start_unix_nano || before.dag_id != now.dag_id ||
          before.task_id != now.task_id || before.run_id != now.run_id || before.try_number != now.try_number)
        return std::nullopt;
      if (before.end_unix_nano == stored_end_unix_nano && now.end_unix_nano < before.end_unix_nano)
        return std::nullopt;
      change.errors_added += std::int64_t{now.error} - std::int64_t{before.error};
    } else {
      // A new root may rename the trace, and a span before the start may be the new earliest (the
      // name of a trace without a root).
      if (now.root || now.start_unix_nano <= stored_start_unix_nano) return std::nullopt;
      ++change.spans_added;
      change.errors_added += std::int64_t{now.error};
      FoldMax(change.dag_id, now.dag_id);
      FoldMax(change.task_id, now.task_id);
      FoldMax(change.run_id, now.run_id);
      FoldMax(change.try_number, now.try_number);
    }
    change.end_unix_nano = std::max(change.end_unix_nano, now.end_unix_nano);
  }
  return change;
}

}  // namespace sparktrace::tracing::store
