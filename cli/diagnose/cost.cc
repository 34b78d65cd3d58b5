#include "cli/diagnose/cost.h"

#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "listener/correlate/phases.h"
#include "listener/correlate/span_builder.h"

namespace sparktrace::cli::diagnose {
namespace {

// Any fixed ids do: the spans live only as long as the computation, and the cost model reads
// their facts and parents, not their trace.
listener::correlate::OperationSpanRef ScratchParent() {
  listener::correlate::OperationSpanRef parent;
  parent.trace[0] = 1;
  parent.parent[0] = 1;
  return parent;
}

std::string Thousands(double value) {
  const auto whole = static_cast<long long>(std::llround(value));
  std::string digits = std::to_string(whole < 0 ? -whole : whole);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3)
    digits.insert(static_cast<std::size_t>(at), ",");
  return (whole < 0 ? "-" : "") + digits;
}

std::string Money(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

}  // namespace

std::optional<traceview::AttemptCost> ApplicationCost(const listener::correlate::ApplicationModel& model,
                                                      const traceview::CostPrices& prices,
                                                      bool application_over) {
  const std::optional<listener::correlate::PhaseBreakdown> phases =
      listener::correlate::ApplicationPhases(model);
  if (!phases) return std::nullopt;
  listener::correlate::SpanBuildOptions options;
  options.application_over = application_over;
  std::vector<tracing::Span> spans = listener::correlate::BuildApplicationSpans(model, options).spans;
  // The operations' stages used the application's executors too.
  for (const auto& [id, operation] : model.operations()) {
    for (tracing::Span& span :
         listener::correlate::BuildOperationSpans(model, id, ScratchParent(), options).spans)
      spans.push_back(std::move(span));
  }
  const auto start_ms = static_cast<double>(phases->window.start_ms);
  const auto end_ms = static_cast<double>(phases->window.end_ms);
  traceview::CostInputs inputs = traceview::CostInputsOfSpans(spans, start_ms, end_ms);
  // The whole application is charged, whoever ran in it.
  inputs.windows = {traceview::CostWindow{start_ms, end_ms, 1.0}};
  inputs.shared = false;
  inputs.other_operations = 0;
  return traceview::ComputeCost(inputs, prices);
}

std::optional<traceview::AttemptCost> OperationCost(const listener::correlate::ApplicationModel& model,
                                                    std::string_view operation_id,
                                                    const traceview::CostPrices& prices,
                                                    bool application_over) {
  const listener::correlate::ConnectOperationRecord* operation = model.FindOperation(operation_id);
  if (operation == nullptr) return std::nullopt;
  const std::optional<listener::correlate::PhaseBreakdown> phases =
      listener::correlate::OperationPhases(model, *operation);
  if (!phases) return std::nullopt;
  listener::correlate::SpanBuildOptions options;
  options.application_over = application_over;
  const std::vector<tracing::Span> spans =
      listener::correlate::BuildOperationSpans(model, operation_id, ScratchParent(), options).spans;
  return traceview::ComputeCost(
      traceview::CostInputsOfSpans(spans, static_cast<double>(phases->window.start_ms),
                                   static_cast<double>(phases->window.end_ms)),
      prices);
}

std::string CostLine(const traceview::AttemptCost& cost) {
  if (!cost.known) return "unknown (the log does not say the executors' cores)";
  std::string line = Thousands(cost.core_seconds) + " core-s allocated (" +
                     Thousands(cost.used_core_seconds) + " used by tasks";
  if (cost.idle_fraction) line += ", " + Thousands(*cost.idle_fraction * 100) + "% of the executors' idle";
  line += ")";
  line += cost.gib_seconds ? ", " + Thousands(*cost.gib_seconds) + " GiB-s" : ", memory unknown";
  if (cost.money) {
    line += "; " + Money(cost.money->total) + " in money (cores " + Money(cost.money->cores) + ", memory " +
            Money(cost.money->memory) + ")";
  }
  if (cost.shared) line += "; " + traceview::CostBasis(cost);
  return line;
}

}  // namespace sparktrace::cli::diagnose
