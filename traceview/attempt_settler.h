#pragma once
// Settling: once a task attempt has ended and no span of it has been indexed for a quiet period, its
// final figures — the cost its page shows (diagnose/cost/cost_model.h) and whether it is a regression of its
// task (diagnose/regression/regression.h, over the page's history) — are computed once and written into its
// task-index row (tracing/store/task_attempts.h, SettledFigures), where the task list can show and sort by
// them, and added to the per-task counters (settler_metrics.h). The store lists what is due and records the
// figures with a conditional update (span_store.h), so that of several proxies sharing one store only
// the one that claims an attempt counts it. A late span makes the row due again: it is settled anew
// and the counters get what its figures grew by.
//
// AttemptSettler does one pass at a time over a store it is given; SettlerThread (settler_thread.h)
// runs the passes.
//
// Threads: one thread at a time (the reader's cache); the metrics are thread-safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/result.h"
#include "traceview/cost_of_spans.h"
#include "traceview/attempt_reader.h"
#include "traceview/settler_metrics.h"
#include "tracing/store/span_store.h"

namespace sparktrace::traceview {

struct SettlerOptions {
  // Between passes; zero: no settling (the flags' "0").
  std::chrono::milliseconds interval = std::chrono::seconds(30);
  // An attempt is settled once no change of it was indexed for this long (late driver events and
  // findings usually arrive within seconds of its end).
  std::chrono::milliseconds quiet = std::chrono::minutes(2);
  // At most this many attempts a pass; the rest wait for the next (the backlog gauge shows them).
  std::size_t max_per_pass = 100;
  diagnose::cost::CostPrices prices;
};

struct SettlePass {
  std::size_t settled = 0;    // recorded by this pass (claimed)
  std::size_t conflicts = 0;  // another settler was first, or the attempt changed meanwhile
  std::int64_t backlog = 0;   // as the store counted it before the pass
};

class AttemptSettler {
 public:
  // `metrics` is shared with /metrics and outlives nothing it is given to.
  AttemptSettler(SettlerOptions options, std::shared_ptr<SettlerMetrics> metrics);

  // Lists the attempts due at `now` and settles each. A store error (listing, reading or recording)
  // ends the pass with it, counted; the caller reconnects, and what is left is due on the next pass.
  // An attempt whose spans are gone meanwhile is recorded with no figures.
  Result<SettlePass> RunPass(tracing::store::SpanStore& store, std::chrono::system_clock::time_point now);

  const SettlerOptions& options() const { return options_; }

 private:
  // Figures of one due attempt, as its page computes them.
  Result<tracing::store::SettledFigures> Compute(tracing::store::SpanStore& store,
                                                 const tracing::store::DueAttempt& due,
                                                 std::chrono::system_clock::time_point now);

  const SettlerOptions options_;
  const std::shared_ptr<SettlerMetrics> metrics_;
  AttemptReader reader_;
};

}  // namespace sparktrace::traceview
