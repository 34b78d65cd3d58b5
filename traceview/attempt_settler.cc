#include "traceview/attempt_settler.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "diagnose/regression/regression.h"

namespace sparktrace::traceview {
namespace {

using tracing::store::SettledFigures;

// What a counter gets for a figure that went from `previous` to `now`: a re-settled attempt adds
// only its growth, and a figure that shrank (a span replaced by a shorter one) takes nothing back
// (counters cannot).
double Growth(const std::optional<double>& now, const std::optional<SettledFigures>& previous,
              std::optional<double> SettledFigures::*figure) {
  const double before = previous ? ((*previous).*figure).value_or(0) : 0;
  return std::max(0.0, now.value_or(0) - before);
}

std::uint64_t Nanos(std::chrono::system_clock::time_point time) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
}

}  // namespace

AttemptSettler::AttemptSettler(SettlerOptions options, std::shared_ptr<SettlerMetrics> metrics)
    : options_(options), metrics_(std::move(metrics)) {}

Result<SettledFigures> AttemptSettler::Compute(tracing::store::SpanStore& store,
                                               const tracing::store::DueAttempt& due,
                                               std::chrono::system_clock::time_point now) {
  std::vector<tracing::Span> spans;
  Breakdown breakdown;
  std::optional<diagnose::regression::Regression> regression;
  if (due.ref.airflow) {
    auto read = reader_.Read(store, due.ref.key);
    if (!read.ok()) return read.error();
    regression = diagnose::regression::DetectRegression(read->history, read->row().state != "running");
    spans = std::move(read->spans);
    breakdown = std::move(read->breakdown);
  } else {
    // A trace without Airflow identity: its row is its one trace; no history, so no regression.
    tracing::store::TaskAttemptFilter filter;
    filter.trace_ids = std::vector<std::string>{due.ref.trace_key};
    filter.limit = 10;
    auto rows = store.ListTaskAttempts(filter);
    if (!rows.ok()) return rows.error();
    const auto row =
        std::find_if(rows->rows.begin(), rows->rows.end(),
                     [](const tracing::store::TaskAttemptRow& candidate) { return !candidate.airflow; });
    if (row == rows->rows.end())
      return Error{ErrorCode::kNotFound, "trace " + due.ref.trace_key + " is gone"};
    auto read = ReadAttemptSpans(store, *row);
    if (!read.ok()) return read.error();
    spans = std::move(read).value();
    breakdown = ComputeBreakdown(spans);
  }
  const diagnose::cost::AttemptCost cost = diagnose::cost::ComputeCost(
      CostInputsOfSpans(spans, breakdown.start_ms, breakdown.end_ms), options_.prices);
  SettledFigures figures;
  if (cost.known) {
    figures.core_seconds = cost.core_seconds;
    figures.gib_seconds = cost.gib_seconds;
    if (cost.money) figures.money = cost.money->total;
    figures.idle_fraction = cost.idle_fraction;
  }
  figures.regression = regression.has_value();
  figures.settled_unix_nano = Nanos(now);
  return figures;
}

Result<SettlePass> AttemptSettler::RunPass(tracing::store::SpanStore& store,
                                           std::chrono::system_clock::time_point now) {
  auto due = store.ListDueAttempts(now, options_.quiet, options_.max_per_pass);
  if (!due.ok()) {
    metrics_->AddError();
    return due.error();
  }
  SettlePass pass;
  pass.backlog = due->backlog;
  for (const tracing::store::DueAttempt& attempt : due->due) {
    // A store error ends the pass (the thread reconnects for the next one): what failed for this
    // attempt (a lost connection, a read-only role) would fail for the next ones too.
    auto figures = Compute(store, attempt, now);
    if (!figures.ok() && figures.error().code != ErrorCode::kNotFound) {
      metrics_->AddError();
      return Error{figures.error().code,
                   fmt::format("reading {}.{} {} try {}: {}", attempt.ref.key.dag_id, attempt.ref.key.task_id,
                               attempt.ref.key.run_id, attempt.ref.key.try_number, figures.error().message)};
    }
    // An attempt whose spans are gone (retention ran between listing and reading) is recorded with
    // no figures, so that it is not listed again on every pass; its row goes with its last trace.
    SettledFigures recorded;
    if (figures.ok()) {
      recorded = *figures;
    } else {
      recorded.settled_unix_nano = Nanos(now);
    }
    auto claim = store.RecordSettlement(attempt.ref, attempt.indexed_unix_nano, recorded);
    if (!claim.ok()) {
      metrics_->AddError();
      return Error{claim.error().code,
                   fmt::format("recording the settled figures of {}.{} {} try {}: {}", attempt.ref.key.dag_id,
                               attempt.ref.key.task_id, attempt.ref.key.run_id, attempt.ref.key.try_number,
                               claim.error().message)};
    }
    if (!claim->claimed) {
      ++pass.conflicts;
      metrics_->AddConflict();
      continue;
    }
    ++pass.settled;
    if (!attempt.ref.airflow) {
      metrics_->AddSettledTrace();
      continue;
    }
    TaskIncrement increment;
    increment.core_seconds = Growth(recorded.core_seconds, claim->previous, &SettledFigures::core_seconds);
    increment.gib_seconds = Growth(recorded.gib_seconds, claim->previous, &SettledFigures::gib_seconds);
    increment.money = Growth(recorded.money, claim->previous, &SettledFigures::money);
    increment.regression = recorded.regression && !(claim->previous && claim->previous->regression);
    metrics_->AddSettled(attempt.ref.key.dag_id, attempt.ref.key.task_id, increment);
  }
  // What is left for the next pass: those recorded here or by another settler are no longer due.
  metrics_->SetBacklog(std::max<std::int64_t>(
      0, due->backlog - static_cast<std::int64_t>(pass.settled) - static_cast<std::int64_t>(pass.conflicts)));
  if (!due->due.empty()) {
    spdlog::debug("settled {} attempt(s) ({} conflicts, {} unsettled before the pass)", pass.settled,
                  pass.conflicts, pass.backlog);
  }
  return pass;
}

}  // namespace sparktrace::traceview
