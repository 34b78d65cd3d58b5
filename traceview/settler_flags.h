#pragma once
// The settling flags of `sparktrace proxy` and `sparktrace ui` (attempt_settler.h), defined once for
// both, as admin/admin_flags.h is for the admin port:
// --settle-interval (0: off), --settle-quiet, --settle-max-per-pass and --task-metric-series. The
// proxy settles by default; `ui` only when given an interval, and only on a store it may write.
//
// Also the trace view's own bounds, --view-max-spans (span_bound.h) and --view-cache-bytes
// (answer_cache.h), which both commands serve.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <span>
#include <vector>

#include "common/flags.h"
#include "common/result.h"
#include "traceview/attempt_settler.h"

namespace sparktrace::traceview {

struct SettleConfig {
  SettlerOptions options;  // options.interval zero: no settling
  std::size_t max_task_series = 1000;
};

// `ui`: the interval defaults to 0 (off) and the help says why.
std::vector<FlagSpec> SettleFlagSpecs(bool ui);

// The settings, or an error naming the flag whose value is malformed or out of range.
Result<SettleConfig> SettleConfigFromFlags(const ParsedFlags& flags,
                                           const diagnose::cost::CostPrices& prices);

// --view-max-spans: the spans an attempt's answer lists at most, the rest summarised (0: all);
// --view-cache-bytes: the built answers kept for the next load of an unchanged attempt (0: none).
struct ViewConfig {
  std::size_t max_spans = 0;
  std::size_t cache_bytes = 0;
};
std::vector<FlagSpec> ViewFlagSpecs();
Result<ViewConfig> ViewConfigFromFlags(const ParsedFlags& flags);

}  // namespace sparktrace::traceview
