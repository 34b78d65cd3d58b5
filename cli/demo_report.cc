#include "cli/demo_report.h"

#include <fmt/format.h>

#include <variant>

#include "cli/demo_trace_wait.h"
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
  }
}

void PrintNextSteps(std::ostream& out, const DemoEndpoints& endpoints, const tracing::TraceId& trace_id) {
  out << "\n"
      << fmt::format("admin:   http://{}/metrics   (also /readyz, /healthz)\n", endpoints.admin)
      << fmt::format("traces:  {} traces list --store {}\n", endpoints.sparktrace, endpoints.store)
      << fmt::format("         {} traces show {} --store {}\n", endpoints.sparktrace,
                     tracing::ToHex(trace_id), endpoints.store)
      << fmt::format("clients: sc://{} reaches the proxy, e.g. PySpark's\n", endpoints.proxy)
      << fmt::format("         SparkSession.builder.remote(\"sc://{}\").getOrCreate()\n", endpoints.proxy)
      << "         (behind it is the simulator: calls are traced, queries return filler bytes)\n";
}

}  // namespace sparktrace::cli
