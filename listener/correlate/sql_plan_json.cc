#include "listener/correlate/sql_plan_json.h"

#include <algorithm>
#include <set>

#include "listener/correlate/sql_plan.h"

namespace sparktrace::listener::correlate {
namespace {

using events::SqlPlan;
using events::SqlPlanMetric;
using events::SqlPlanNode;

void WriteValue(JsonWriter& json, std::int64_t value, std::int64_t divisor) {
  if (divisor == 1) {
    json.Int(value);
  } else {
    json.Double(static_cast<double>(value) / static_cast<double>(divisor));
  }
}

void WriteOptionalValue(JsonWriter& json, const std::optional<std::int64_t>& value, std::int64_t divisor) {
  if (value) {
    WriteValue(json, *value, divisor);
  } else {
    json.Null();
  }
}

void WriteOptionalInt(JsonWriter& json, const std::optional<std::int64_t>& value) {
  if (value) {
    json.Int(*value);
  } else {
    json.Null();
  }
}

void WriteMetric(JsonWriter& json, const SqlPlanMetric& metric, const SqlMetricSummaries& summaries,
                 bool bookkeeping) {
  json.BeginObject().Key("name").String(metric.name);
  if (bookkeeping) json.Key("accumulator_id").Int(metric.accumulator_id);
  json.Key("type").String(metric.type);
  if (bookkeeping) json.Key("unit").String(SqlMetricUnit(SqlMetricTypeFromName(metric.type)));
  const auto found = summaries.find(metric.accumulator_id);
  if (found == summaries.end()) {
    // No task or driver update reached it (Spark's UI shows nothing for it).
    json.Key("total").Int(0).Key("min").Null().Key("median").Null().Key("max").Null();
    if (bookkeeping) json.Key("values").Int(0).Key("approximate").Bool(false);
  } else {
    const SqlMetricSummary& summary = found->second;
    json.Key("total");
    WriteValue(json, summary.total, summary.divisor);
    WriteOptionalValue(json.Key("min"), summary.min, summary.divisor);
    WriteOptionalValue(json.Key("median"), summary.median, summary.divisor);
    WriteOptionalValue(json.Key("max"), summary.max, summary.divisor);
    if (bookkeeping) json.Key("values").Int(summary.values).Key("approximate").Bool(summary.approximate);
  }
  json.EndObject();
}

void WriteFacts(JsonWriter& json, const SqlPlan& plan, std::uint32_t index, const SqlMetricSummaries& summaries) {
  const SqlOperatorFacts facts = OperatorFacts(plan, index, summaries);
  json.Key("time_ms").Double(facts.time_ms);
  WriteOptionalInt(json.Key("rows"), facts.output_rows);
  WriteOptionalInt(json.Key("spill_bytes"), facts.spill_bytes);
  WriteOptionalInt(json.Key("peak_memory_bytes"), facts.peak_memory_bytes);
}

// Recursive: plans are at most events::kMaxPlanDepth deep (the parser keeps no deeper levels).
void WriteNodeRecursive(JsonWriter& json, const SqlPlan& plan, std::uint32_t index,
                        const std::vector<std::optional<std::int32_t>>& codegen,
                        const SqlMetricSummaries& summaries, const SqlPlanJsonShape& shape,
                        std::size_t& written) {
  ++written;
  const SqlPlanNode& node = plan.nodes[index];
  json.BeginObject().Key("id").Int(index).Key("name").String(node.name).Key("detail").String(node.detail);
  WriteOptionalInt(json.Key("codegen_stage"), codegen[index]);
  std::set<std::int32_t> stage_ids;
  for (const SqlPlanMetric& metric : node.metrics) {
    if (auto found = summaries.find(metric.accumulator_id); found != summaries.end())
      stage_ids.insert(found->second.stage_ids.begin(), found->second.stage_ids.end());
  }
  json.Key("stage_ids").BeginArray();
  for (std::int32_t stage_id : stage_ids) json.Int(stage_id);
  json.EndArray();
  if (shape.operator_facts) WriteFacts(json, plan, index, summaries);
  if (shape.metrics) {
    json.Key("metrics").BeginArray();
    for (const SqlPlanMetric& metric : node.metrics) WriteMetric(json, metric, summaries, shape.metric_bookkeeping);
    json.EndArray();
  }
  json.Key("children").BeginArray();
  std::int64_t omitted = 0;
  for (std::uint32_t child : node.children) {
    if (child >= plan.nodes.size()) continue;
    if (written >= shape.max_nodes) {
      ++omitted;
      continue;
    }
    WriteNodeRecursive(json, plan, child, codegen, summaries, shape, written);
  }
  json.EndArray();
  if (omitted > 0) json.Key("children_omitted").Int(omitted);
  json.EndObject();
}

std::string Document(const SqlPlan& plan, const std::vector<std::optional<std::int32_t>>& codegen,
                     const SqlMetricSummaries& summaries, const SqlPlanJsonShape& shape, double operator_time_ms,
                     std::size_t& written) {
  JsonWriter json;
  json.BeginObject().Key("nodes").Int(static_cast<std::int64_t>(plan.nodes.size()));
  json.Key("dropped_by_parser").Int(plan.dropped_nodes);
  json.Key("metrics_dropped").Bool(!shape.metrics);
  json.Key("operator_time_ms").Double(operator_time_ms);
  json.Key("root");
  written = 0;
  WriteNodeRecursive(json, plan, 0, codegen, summaries, shape, written);
  // Counted while writing the tree, so after it.
  json.Key("nodes_written").Int(static_cast<std::int64_t>(written));
  json.EndObject();
  return json.Take();
}

}  // namespace

std::size_t WriteSqlPlanNode(JsonWriter& json, const SqlPlan& plan, std::uint32_t index,
                             const std::vector<std::optional<std::int32_t>>& codegen,
                             const SqlMetricSummaries& summaries, const SqlPlanJsonShape& shape) {
  std::size_t written = 0;
  if (index < plan.nodes.size() && shape.max_nodes > 0)
    WriteNodeRecursive(json, plan, index, codegen, summaries, shape, written);
  return written;
}

BoundedSqlPlanJson SqlPlanJsonWithin(const SqlPlan& plan, const SqlMetricSummaries& summaries,
                                     std::size_t max_bytes) {
  BoundedSqlPlanJson bounded;
  if (plan.nodes.empty()) return bounded;
  const std::vector<std::optional<std::int32_t>> codegen = CodegenStageIds(plan);
  const double operator_time_ms = TotalOperatorTimeMs(plan, summaries);
  SqlPlanJsonShape shape;
  shape.operator_facts = true;
  shape.metric_bookkeeping = false;
  std::size_t written = 0;
  std::string json = Document(plan, codegen, summaries, shape, operator_time_ms, written);
  if (json.size() > max_bytes) {
    shape.metrics = false;
    bounded.metrics_dropped = true;
    json = Document(plan, codegen, summaries, shape, operator_time_ms, written);
  }
  // Cut the tree in proportion to the excess (nodes are of similar size without their metrics),
  // a tenth below to land under the cap in one or two more writes.
  while (json.size() > max_bytes && written > 1) {
    const double ratio = static_cast<double>(max_bytes) / static_cast<double>(json.size());
    shape.max_nodes = std::min(written - 1, static_cast<std::size_t>(static_cast<double>(written) * ratio * 0.9));
    if (shape.max_nodes == 0) shape.max_nodes = 1;
    json = Document(plan, codegen, summaries, shape, operator_time_ms, written);
  }
  if (json.size() > max_bytes) {
    bounded.cut = true;
    return bounded;  // not even the root fits
  }
  bounded.json = std::move(json);
  bounded.nodes_written = written;
  bounded.cut = written < plan.nodes.size();
  return bounded;
}

}  // namespace sparktrace::listener::correlate
