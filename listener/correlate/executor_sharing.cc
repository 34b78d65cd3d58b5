#include "listener/correlate/executor_sharing.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>

namespace sparktrace::listener::correlate {

ExecutorSharing SharingDuring(const ApplicationModel& model, std::string_view operation_id, TimeWindow window,
                              events::EpochMillis now_ms) {
  ExecutorSharing sharing;
  std::set<std::string, std::less<>> others;
  double run_time_ms = 0;
  for (const auto& [key, stage] : model.stages()) {
    const std::optional<events::EpochMillis> start = stage.StartMs();
    if (!start || stage.tasks.executor_run_time_ms <= 0) continue;
    const events::EpochMillis end = std::max(*start, stage.completion_ms.value_or(now_ms));
    const events::EpochMillis overlap = std::min(end, window.end_ms) - std::max(*start, window.start_ms);
    // An instantaneous stage inside the window counts whole; one outside it, or touching only its edge, not.
    const bool inside = end == *start && *start >= window.start_ms && *start <= window.end_ms;
    if (overlap <= 0 && !inside) continue;
    std::optional<std::string> operation;
    if (const std::optional<std::int32_t> job = model.JobOfStageAttempt(stage)) {
      if (const auto found = model.jobs().find(*job); found != model.jobs().end())
        operation = model.OperationOfJob(found->second);
    }
    if (operation && *operation == operation_id) continue;
    const double share = inside ? 1.0 : static_cast<double>(overlap) / static_cast<double>(end - *start);
    run_time_ms += share * static_cast<double>(stage.tasks.executor_run_time_ms);
    if (operation) others.insert(std::move(*operation));
  }
  sharing.others_run_time_ms = std::llround(run_time_ms);
  sharing.other_operations = static_cast<std::int64_t>(others.size());
  return sharing;
}

}  // namespace sparktrace::listener::correlate
