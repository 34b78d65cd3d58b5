#include "tracing/store/increment/attempt_delta.h"

#include <algorithm>
#include <vector>

namespace sparktrace::tracing::store::task_index {

std::optional<AttemptSums> AddPartChanges(AttemptSums sums, const std::vector<PartChange>& changes) {
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
    }
    sums.start_unix_nano = std::min(sums.start_unix_nano, start);
    sums.end_unix_nano = std::max(sums.end_unix_nano, end);
    sums.span_count += after.spans;
    sums.error_count += after.Errors();
    sums.open_count += after.open;
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      sums.phase_ms[phase] += after.phase_ms[phase];
  }
  return sums;
}

}  // namespace sparktrace::tracing::store::task_index
