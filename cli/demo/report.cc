#include "cli/demo/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <vector>

#include "cli/demo/trace_wait.h"
#include "common/units.h"
#include "traceview/attempt_url.h"
#include "tracing/finding_event.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/task_attempts.h"
#include "cli/trace_tree.h"

namespace sparktrace::cli::demo {
namespace {

std::int64_t IntAttribute(const tracing::Span& span, std::string_view key) {
  const auto* number = tracing::AttributeValueOf<std::int64_t>(span.attributes, key);
  return number != nullptr ? *number : 0;
}

// "resource_wait 2.4s, compute 310ms, ..." from the operation's spark.phase.* child spans (each
// carries its phase's total over the operation), in the phase model's order; "" before the
// driver's events arrived.
std::string PhaseSummary(std::span<const tracing::Span> spans, const tracing::Span& operation) {
  std::string summary;
  for (const std::string_view phase : tracing::kSparkPhaseNames) {
    const tracing::Span* found =
        FindChildSpan(spans, operation, std::string(tracing::kSparkPhasePrefix) + std::string(phase));
    if (found == nullptr) continue;
    summary += fmt::format(
        "{}{} {}", summary.empty() ? "" : ", ", phase,
        FormatDuration(std::chrono::milliseconds(IntAttribute(*found, tracing::kSparkPhaseTotalMsKey))));
  }
  return summary;
}

// The diagnosis findings the proxy put on the operation's lifecycle span, most impactful first:
// "[critical] resource-wait-long ~2.4s  waited 2.4s (94% of the wall time) for executors ...".
std::vector<std::string> FindingLines(std::span<const tracing::Span> spans, const tracing::Span& operation) {
  std::vector<std::string> lines;
  const tracing::Span* lifecycle = FindChildSpan(spans, operation, kLifecycleSpanName);
  if (lifecycle == nullptr) return lines;
  for (const auto& event : lifecycle->events) {
    const std::optional<tracing::FindingEvent> finding = tracing::DecodeFindingEvent(event);
    if (!finding) continue;
    lines.push_back(fmt::format("[{}] {} ~{:.1f}s  {}", finding->severity, finding->id,
                                finding->impact_seconds, finding->title));
  }
  return lines;
}

}  // namespace

void PrintTrace(std::ostream& out, std::span<const tracing::Span> spans,
                std::span<const DemoOperation> operations) {
  out << "\n" << RenderTraceText(spans) << "\noperations:\n";
  for (const auto& operation : operations) {
    const tracing::Span* span = FindOperationSpan(spans, operation.operation_id);
    const std::string outcome =
        span != nullptr ? StringAttribute(*span, tracing::kSparkConnectOperationOutcomeKey) : "";
    std::string notes;
    if (span != nullptr) {
      if (const auto reattaches = IntAttribute(*span, tracing::kSparkConnectReattachCountKey);
          reattaches > 0) {
        notes += fmt::format("  reattached {}x", reattaches);
      }
    }
    if (outcome != operation.expected_outcome) notes += "  (expected " + operation.expected_outcome + ")";
    out << fmt::format("  {:<11} {}  outcome={}{}\n", operation.label, operation.operation_id,
                       outcome.empty() ? "?" : outcome, notes);
    if (span != nullptr) {
      if (const std::string phases = PhaseSummary(spans, *span); !phases.empty()) {
        out << fmt::format("              driver phases: {}\n", phases);
      }
      for (const std::string& finding : FindingLines(spans, *span)) {
        out << fmt::format("              finding: {}\n", finding);
      }
    }
  }
}

// `text` as one shell word, so that a printed command can be pasted: a PostgreSQL URL's `&` and `?`
// would otherwise end or glob it.
std::string ShellWord(std::string_view text) {
  const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("_./:@%+=,-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(text);
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string TraceViewUrl(const DemoEndpoints& endpoints, const tracing::AirflowIdentity& airflow) {
  return "http://" + endpoints.admin +
         traceview::AttemptPageHref(tracing::store::TaskAttemptKey{
             airflow.dag_id, airflow.task_id, airflow.run_id, airflow.try_number, airflow.map_index});
}

void PrintSettledCost(std::ostream& out, const DemoEndpoints& endpoints,
                      const tracing::store::TaskAttemptRow& row) {
  const tracing::store::SettledFigures& figures = *row.settled;
  std::string cost = "not known (the executors' cores were not reported)";
  if (figures.core_seconds) {
    cost = fmt::format("{:.0f} core-s", *figures.core_seconds);
    if (figures.gib_seconds) cost += fmt::format(", {:.0f} GiB-s", *figures.gib_seconds);
    if (figures.money) cost += fmt::format(", {:.4g} at the configured prices", *figures.money);
  }
  out << fmt::format("\ncost:    {} (settled{})\n", cost,
                     figures.regression ? "; a regression of its task" : "")
      << fmt::format("         the task list, most expensive first: http://{}/?sort=-cost\n",
                     endpoints.admin);
}

void PrintNextSteps(std::ostream& out, const DemoEndpoints& endpoints, const tracing::TraceId& trace_id,
                    const tracing::AirflowIdentity& airflow) {
  out << "\n"
      << fmt::format("open:    {}\n", TraceViewUrl(endpoints, airflow))
      << "         (the trace view of this Airflow task attempt: where its time went, why, what to change)\n"
      << fmt::format("admin:   http://{}/metrics   (also /readyz, /healthz; all tasks: http://{}/)\n",
                     endpoints.admin, endpoints.admin)
      << fmt::format("traces:  {} traces list --store {}\n", endpoints.sparktrace, ShellWord(endpoints.store))
      << fmt::format("         {} traces show {} --store {}\n", endpoints.sparktrace,
                     tracing::ToHex(trace_id), ShellWord(endpoints.store))
      << fmt::format("spark:   {} diagnose --rules {} {}\n", endpoints.sparktrace, endpoints.rules,
                     endpoints.event_log_dir)
      << "         (the simulated Spark event log, offline; the rules' time floors are scaled to the demo's "
         "speed)\n"
      << fmt::format("clients: sc://{} reaches the proxy, e.g. PySpark's\n", endpoints.proxy)
      << fmt::format("         SparkSession.builder.remote(\"sc://{}\").getOrCreate()\n", endpoints.proxy)
      << "         (behind it is the simulator: calls are traced, queries return filler bytes)\n";
}

}  // namespace sparktrace::cli::demo
