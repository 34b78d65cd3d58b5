#include "listener/correlate/sql_plan.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <utility>

namespace sparktrace::listener::correlate {
namespace {

constexpr std::string_view kCodegenPrefix = "WholeStageCodegen";

}  // namespace

std::optional<std::int32_t> CodegenStageIdFromName(std::string_view node_name) {
  if (!node_name.starts_with(kCodegenPrefix)) return std::nullopt;
  std::string_view rest = node_name.substr(kCodegenPrefix.size());
  if (!rest.starts_with(" (") || !rest.ends_with(")")) return std::nullopt;
  rest = rest.substr(2, rest.size() - 3);
  std::int32_t id = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), id);
  if (error != std::errc() || end != rest.data() + rest.size()) return std::nullopt;
  return id;
}

std::vector<std::optional<std::int32_t>> CodegenStageIds(const events::SqlPlan& plan) {
  std::vector<std::optional<std::int32_t>> stages(plan.nodes.size());
  if (plan.nodes.empty()) return stages;
  // Iterative (plans may be thousands of operators deep): (node, stage its parent passes down).
  std::vector<std::pair<std::uint32_t, std::optional<std::int32_t>>> stack = {{0, std::nullopt}};
  while (!stack.empty()) {
    auto [index, inherited] = stack.back();
    stack.pop_back();
    if (index >= plan.nodes.size()) continue;
    const events::SqlPlanNode& node = plan.nodes[index];
    std::optional<std::int32_t> own = inherited;
    std::optional<std::int32_t> below = inherited;
    if (node.name.starts_with(kCodegenPrefix)) {
      own = below = CodegenStageIdFromName(node.name);
    } else if (node.name == "InputAdapter") {
      below = std::nullopt;  // what feeds the generated code runs outside it
    }
    stages[index] = own;
    for (std::uint32_t child : node.children) stack.emplace_back(child, below);
  }
  return stages;
}

SqlOperatorFacts OperatorFacts(const events::SqlPlan& plan, std::uint32_t node,
                               const std::map<std::int64_t, SqlMetricSummary>& metrics) {
  SqlOperatorFacts facts;
  facts.node = node;
  if (node >= plan.nodes.size()) return facts;
  for (const events::SqlPlanMetric& metric : plan.nodes[node].metrics) {
    auto summary = metrics.find(metric.accumulator_id);
    if (summary == metrics.end()) continue;
    const std::int64_t total = summary->second.total;
    switch (SqlMetricTypeFromName(metric.type)) {
      case SqlMetricType::kTiming:
        facts.time_ms += static_cast<double>(total);
        break;
      case SqlMetricType::kNsTiming:
        facts.time_ms += static_cast<double>(total) / 1e6;
        break;
      default:
        break;
    }
    if (metric.name == "number of output rows") facts.output_rows = total;
    if (metric.name == "spill size") facts.spill_bytes = total;
    if (metric.name == "peak memory") facts.peak_memory_bytes = total;
  }
  return facts;
}

std::vector<SqlOperatorFacts> TopOperatorsByTime(const events::SqlPlan& plan,
                                                 const std::map<std::int64_t, SqlMetricSummary>& metrics,
                                                 std::size_t count) {
  std::vector<SqlOperatorFacts> operators;
  std::set<std::int64_t> seen_accumulators;
  for (std::uint32_t node = 0; node < plan.nodes.size(); ++node) {
    bool repeat = !plan.nodes[node].metrics.empty();
    for (const events::SqlPlanMetric& metric : plan.nodes[node].metrics)
      repeat = !seen_accumulators.insert(metric.accumulator_id).second && repeat;
    if (repeat) continue;
    SqlOperatorFacts facts = OperatorFacts(plan, node, metrics);
    if (facts.time_ms > 0) operators.push_back(facts);
  }
  std::stable_sort(
      operators.begin(), operators.end(),
      [](const SqlOperatorFacts& a, const SqlOperatorFacts& b) { return a.time_ms > b.time_ms; });
  if (operators.size() > count) operators.resize(count);
  return operators;
}

double TotalOperatorTimeMs(const events::SqlPlan& plan, const std::map<std::int64_t, SqlMetricSummary>& metrics) {
  double total = 0;
  for (const SqlOperatorFacts& facts : TopOperatorsByTime(plan, metrics, plan.nodes.size())) total += facts.time_ms;
  return total;
}

}  // namespace sparktrace::listener::correlate
