#pragma once
// An application's phase totals over its whole window (listener/correlate/phases.h) that survive
// ApplicationModel::ForgetFinishedBefore. The model's own ApplicationPhases covers only the stage
// attempts it still holds, so after finished jobs are dropped their compute time would turn into
// idle. Before dropping, the feed folds the window up to the cutoff into fixed totals; only the
// rest of the window is computed from the model afterwards. Folding [a, b) and then [b, c) gives
// exactly the totals of [a, c) (phases clip stages and executors to the window), so without
// forgetting the totals equal ApplicationPhases'.
//
// Not synchronised: the feed thread owns it with its model.

#include <array>
#include <cstdint>
#include <optional>

#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::feed {

struct PhaseTotals {
  std::int64_t window_ms = 0;
  // Indexed by Phase; sums to window_ms.
  std::array<std::int64_t, listener::correlate::kPhaseCount> total_ms{};
  // The phase of the window's last millisecond: where the application is at its latest event.
  // nullopt while the unfolded rest of the window is empty (an application seen only at its start).
  std::optional<listener::correlate::Phase> latest;
};

class ApplicationPhaseTotals {
 public:
  // Fixes the totals of the window up to `cutoff_ms` (clipped to the window) with the model's
  // current stage attempts. Call just before model.ForgetFinishedBefore(cutoff_ms).
  void FoldUntil(const listener::correlate::ApplicationModel& model, listener::events::EpochMillis cutoff_ms);

  // The folded totals plus the model's phases from there to the window's end; nullopt before the
  // application's start is known.
  std::optional<PhaseTotals> Totals(const listener::correlate::ApplicationModel& model) const;

  bool folded() const { return folded_until_ms_.has_value(); }

 private:
  std::optional<listener::events::EpochMillis> folded_until_ms_;
  std::array<std::int64_t, listener::correlate::kPhaseCount> folded_ms_{};
};

}  // namespace sparktrace::feed
