#include "cli/demo_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <variant>
#include <vector>

#include "cli/demo_trace_wait.h"
#include "common/units.h"
#include "tracing/trace_tree.h"

namespace sparktrace::cli {
namespace {

constexpr std::string_view kOutcomeKey = "spark.connect.operation.outcome";
constexpr std::string_view kReattachCountKey = "spark.connect.reattach_count";

std::int64_t IntAttribute(const tracing::Span& span, std::string_view key) {
  for (const auto& attribute : span.attributes) {
    if (attribute.key != key) continue;
    if (const auto* number = std::get_if<std::int64_t>(&attribute.value)) return *number;
  }
  return 0;
}

// "resource_wait 2.4s, compute 310ms, ..." from the operation's spark.phase.* child spans (each
// carries its phase's total over the operation), in the phase model's order; "" before the
// driver's events arrived.
std::string PhaseSummary(std::span<const tracing::Span> spans, const tracing::Span& operation) {
  std::string summary;
  for (const std::string_view phase : {"resource_wait", "compute", "io_write", "idle"}) {
    const std::string name = "spark.phase." + std::string(phase);
    const auto found = std::find_if(spans.begin(), spans.end(), [&](const tracing::Span& span) {
      return span.parent_span_id == operation.span_id && span.name == name;
    });
    if (found == spans.end()) continue;
    summary +=
        fmt::format("{}{} {}", summary.empty() ? "" : ", ", phase,
                    FormatDuration(std::chrono::milliseconds(IntAttribute(*found, "spark.phase.total_ms"))));
  }
  return summary;
}

}  // namespace

void PrintTrace(std::ostream& out, std::span<const tracing::Span> spans,
                std::span<const DemoOperation> operations) {
  out << "\n" << tracing::RenderTraceText(spans) << "\noperations:\n";
  for (const auto& operation : operations) {
    const tracing::Span* span = FindOperationSpan(spans, operation.operation_id);
    const std::string outcome = span != nullptr ? StringAttribute(*span, kOutcomeKey) : "";
    std::string notes;
    if (span != nullptr) {
      if (const auto reattaches = IntAttribute(*span, kReattachCountKey); reattaches > 0) {
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
    }
  }
}

void PrintNextSteps(std::ostream& out, const DemoEndpoints& endpoints, const tracing::TraceId& trace_id) {
  out << "\n"
      << fmt::format("admin:   http://{}/metrics   (also /readyz, /healthz)\n", endpoints.admin)
      << fmt::format("traces:  {} traces list --store {}\n", endpoints.sparktrace, endpoints.store)
      << fmt::format("         {} traces show {} --store {}\n", endpoints.sparktrace,
                     tracing::ToHex(trace_id), endpoints.store)
      << fmt::format("spark:   {} diagnose {}   (the simulated Spark event log, offline)\n",
                     endpoints.sparktrace, endpoints.event_log_dir)
      << fmt::format("clients: sc://{} reaches the proxy, e.g. PySpark's\n", endpoints.proxy)
      << fmt::format("         SparkSession.builder.remote(\"sc://{}\").getOrCreate()\n", endpoints.proxy)
      << "         (behind it is the simulator: calls are traced, queries return filler bytes)\n";
}

}  // namespace sparktrace::cli
