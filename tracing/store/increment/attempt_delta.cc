#include "tracing/store/increment/attempt_delta.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace sparktrace::tracing::store::task_index {
namespace {

// `trace_ids` (ascending, comma-separated) with `added` merged in, in one pass: an attempt of a call
// per trace names tens of thousands, and a batch adds hundreds. nullopt when one is there already.
std::optional<std::string> MergeTraceIds(const std::string& trace_ids, std::vector<std::string_view> added) {
  std::sort(added.begin(), added.end());
  if (std::adjacent_find(added.begin(), added.end()) != added.end()) return std::nullopt;
  std::string merged;
  merged.reserve(trace_ids.size() + added.size() * (added.front().size() + 1));
  const auto append = [&merged](std::string_view id) {
    if (!merged.empty()) merged += ',';
    merged += id;
  };
  auto next_added = added.begin();
  std::size_t begin = 0;
  while (begin < trace_ids.size()) {
    const std::size_t comma = trace_ids.find(',', begin);
    const std::size_t end = comma == std::string::npos ? trace_ids.size() : comma;
    const std::string_view stored = std::string_view(trace_ids).substr(begin, end - begin);
    for (; next_added != added.end() && *next_added <= stored; ++next_added) {
      if (*next_added == stored) return std::nullopt;
      append(*next_added);
    }
    append(stored);
    begin = end + 1;
  }
  for (; next_added != added.end(); ++next_added) append(*next_added);
  return merged;
}

}  // namespace

std::optional<AttemptSums> AddPartChanges(AttemptSums sums, const std::vector<PartChange>& changes) {
  std::vector<std::string_view> new_traces;
  for (const PartChange& change : changes) {
    const Part& after = change.after;
    if (after.findings > 0 || (change.before && change.before->findings > 0)) return std::nullopt;
    const auto start = static_cast<std::int64_t>(after.start);
    const auto end = static_cast<std::int64_t>(after.end);
    if (change.before) {
      const Part& before = *change.before;
      const auto before_start = static_cast<std::int64_t>(before.start);
      const auto before_end = static_cast<std::int64_t>(before.end);
      if (before_start == sums.start_unix_nano && start > before_start) return std::nullopt;
      if (before_end == sums.end_unix_nano && end < before_end) return std::nullopt;
      sums.span_count -= before.spans;
      sums.error_count -= before.Errors();
      sums.open_count -= before.open;
      for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
        sums.phase_ms[phase] -= before.phase_ms[phase];
    } else {
      new_traces.push_back(change.trace_id);
    }
    sums.start_unix_nano = std::min(sums.start_unix_nano, start);
    sums.end_unix_nano = std::max(sums.end_unix_nano, end);
    sums.span_count += after.spans;
    sums.error_count += after.Errors();
    sums.open_count += after.open;
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      sums.phase_ms[phase] += after.phase_ms[phase];
  }
  if (!new_traces.empty()) {
    // A new part in a trace the row already names: the stored parts disagree with the row.
    auto merged = MergeTraceIds(sums.trace_ids, std::move(new_traces));
    if (!merged) return std::nullopt;
    sums.trace_ids = std::move(*merged);
  }
  return sums;
}

}  // namespace sparktrace::tracing::store::task_index
