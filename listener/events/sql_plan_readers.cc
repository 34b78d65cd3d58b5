// Readers of SQL plans ("sparkPlanInfo", Spark's SparkPlanInfo serialised by Jackson:
// {"nodeName", "simpleString", "children": [...], "metadata": {...}, "metrics": [{"name",
// "accumulatorId", "metricType"}]}) and of the events that carry metric ids and driver-side values:
// SparkListenerSQLAdaptiveExecutionUpdate, SparkListenerSQLAdaptiveSQLMetricUpdates and
// SparkListenerDriverAccumUpdates.
//
// A plan is flattened in pre-order with bounds (SqlPlan): at most `max_plan_nodes` operators are
// kept (the others are walked and counted, not stored) and operators deeper than kMaxPlanDepth are
// skipped undecoded (the recursion, one C++ frame per level, stays bounded). "metadata" (file
// paths, pushed filters) is never decoded.
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "listener/events/event_readers.h"

namespace sparktrace::listener::events::json {
namespace {

// A string Spark writes plain (a metric's name and type), taken from its raw token when that holds
// no escape, without unescaping it into simdjson's string buffer first; others are decoded.
error_code ReadPlainString(ondemand::value& value, std::string& out) {
  std::string_view token = value.raw_json_token();
  while (!token.empty() &&
         (token.back() == ' ' || token.back() == '\t' || token.back() == '\n' || token.back() == '\r'))
    token.remove_suffix(1);
  if (token.size() >= 2 && token.front() == '"' && token.back() == '"') {
    const std::string_view text = token.substr(1, token.size() - 2);
    if (text.find('\\') == std::string_view::npos) {
      out.assign(text);
      return simdjson::SUCCESS;  // the value itself is skipped by the object's iterator
    }
  }
  return ReadString(value, out);
}

// Plans of large queries carry thousands of metrics (a Photon plan update: 245 operators, 4,032
// metrics), so these readers compare keys raw (Spark writes them plain), skip what they do not
// need without decoding it, and leave a metric once its three fields are read (Databricks adds
// "experimental" after them).
error_code ReadPlanMetric(ondemand::value& value, SqlPlanMetric& out, bool& has_id) {
  ondemand::object object;
  if (error_code error = value.get_object().get(object)) return error;
  bool has_name = false;
  bool has_type = false;
  for (auto field_result : object) {
    ondemand::field field;
    if (error_code error = std::move(field_result).get(field)) return error;
    const ondemand::raw_json_string key = field.key();
    if (key == "name") {
      if (error_code error = ReadPlainString(field.value(), out.name)) return error;
      has_name = true;
    } else if (key == "accumulatorId") {
      if (error_code error = field.value().get_int64().get(out.accumulator_id)) return error;
      has_id = true;
    } else if (key == "metricType") {
      if (error_code error = ReadPlainString(field.value(), out.type)) return error;
      has_type = true;
    }
    if (has_name && has_id && has_type) break;  // the array iterator skips the rest of this object
  }
  return simdjson::SUCCESS;
}

error_code ReadPlanMetrics(ondemand::value& value, std::vector<SqlPlanMetric>* out) {
  return VisitArray(value, [&](ondemand::value& element) -> error_code {
    if (out == nullptr) return simdjson::SUCCESS;  // an operator not kept: skipped undecoded
    SqlPlanMetric& metric = out->emplace_back();
    bool has_id = false;
    if (error_code error = ReadPlanMetric(element, metric, has_id)) return error;
    if (!has_id) out->pop_back();
    return simdjson::SUCCESS;
  });
}

// "simpleString" cut to kMaxPlanDetailBytes. Long ones (hundreds of bytes of expressions) are cut
// from their raw text when its first bytes hold no escape, without decoding the rest.
error_code ReadPlanDetail(ondemand::value& value, std::string& out) {
  const std::string_view token = value.raw_json_token();
  if (token.size() > kMaxPlanDetailBytes + 2 && token.front() == '"') {
    const std::string_view head = token.substr(1, kMaxPlanDetailBytes + 1);
    if (head.find('\\') == std::string_view::npos && head.find('"') == std::string_view::npos) {
      out.assign(Utf8Prefix(head, kMaxPlanDetailBytes));
      return simdjson::SUCCESS;  // the value itself is skipped by the object's iterator
    }
  }
  std::string_view text;
  if (error_code error = value.get_string().get(text)) return error;
  out.assign(Utf8Prefix(text, kMaxPlanDetailBytes));
  return simdjson::SUCCESS;
}

class PlanReader {
 public:
  PlanReader(ReadFailure& failure, std::size_t max_nodes, SqlPlan& plan)
      : failure_(failure), max_nodes_(max_nodes), plan_(plan) {}

  // Reads one operator (and its subtree) at `depth` (the root is 1). `index` receives its place in
  // plan_.nodes, or stays unset when it was not kept.
  error_code ReadNode(ondemand::value& value, std::size_t depth, std::optional<std::uint32_t>& index) {
    const bool keep = plan_.nodes.size() < max_nodes_;
    if (keep) {
      index = static_cast<std::uint32_t>(plan_.nodes.size());
      plan_.nodes.emplace_back();
    } else {
      ++plan_.dropped_nodes;
    }
    return VisitObject(value, failure_, [&](std::string_view key, ondemand::value& field) -> error_code {
      if (key == "nodeName") return keep ? ReadString(field, plan_.nodes[*index].name) : simdjson::SUCCESS;
      if (key == "simpleString")
        return keep ? ReadPlanDetail(field, plan_.nodes[*index].detail) : simdjson::SUCCESS;
      if (key == "children") return ReadChildren(field, depth, index);
      if (key == "metrics")
        return keep ? ReadNodeMetrics(field, plan_.nodes[*index]) : ReadPlanMetrics(field, nullptr);
      return simdjson::SUCCESS;  // "metadata"
    });
  }

 private:
  error_code ReadChildren(ondemand::value& value, std::size_t depth,
                          const std::optional<std::uint32_t>& parent) {
    return VisitArray(value, [&](ondemand::value& child) -> error_code {
      if (depth >= kMaxPlanDepth) {
        ++plan_.dropped_nodes;  // the subtree is skipped undecoded: counted as one
        return simdjson::SUCCESS;
      }
      std::optional<std::uint32_t> child_index;
      if (error_code error = ReadNode(child, depth + 1, child_index)) return error;
      if (parent && child_index) plan_.nodes[*parent].children.push_back(*child_index);
      return simdjson::SUCCESS;
    });
  }

  // Read into one buffer kept for the whole plan, then moved into the node in one allocation of
  // the right size: a node's vector would grow by doubling (an AQE plan update of a Photon query
  // has 4,032 metrics).
  error_code ReadNodeMetrics(ondemand::value& value, SqlPlanNode& node) {
    metrics_buffer_.clear();
    if (error_code error = ReadPlanMetrics(value, &metrics_buffer_)) return error;
    node.metrics.assign(std::make_move_iterator(metrics_buffer_.begin()),
                        std::make_move_iterator(metrics_buffer_.end()));
    return simdjson::SUCCESS;
  }

  ReadFailure& failure_;
  std::size_t max_nodes_;
  SqlPlan& plan_;
  std::vector<SqlPlanMetric> metrics_buffer_;
};

}  // namespace

error_code ReadSparkPlanInfo(ondemand::value& value, ReadFailure& failure, std::size_t max_plan_nodes,
                             SqlPlan& out) {
  PlanReader reader(failure, max_plan_nodes, out);
  std::optional<std::uint32_t> root;
  return reader.ReadNode(value, 1, root);
}

error_code ReadSqlAdaptiveExecutionUpdate(FieldRange fields, ReadFailure& failure, std::size_t max_plan_nodes,
                                          SqlAdaptiveExecutionUpdate& out) {
  bool has_execution_id = false;
  bool has_plan = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "executionId") {
              has_execution_id = true;
              return ReadInt64(value, out.execution_id);
            }
            if (key == "sparkPlanInfo") {
              has_plan = true;
              return ReadSparkPlanInfo(value, failure, max_plan_nodes, out.plan);
            }
            return simdjson::SUCCESS;  // physicalPlanDescription
          })) {
    return visit_error;
  }
  if (!has_execution_id) return Missing(failure, "executionId");
  if (!has_plan) return Missing(failure, "sparkPlanInfo");
  return simdjson::SUCCESS;
}

error_code ReadSqlAdaptiveMetricUpdates(FieldRange fields, ReadFailure& failure,
                                        SqlAdaptiveMetricUpdates& out) {
  bool has_execution_id = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "executionId") {
              has_execution_id = true;
              return ReadInt64(value, out.execution_id);
            }
            if (key == "sqlPlanMetrics") return ReadPlanMetrics(value, &out.metrics);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_execution_id) return Missing(failure, "executionId");
  return simdjson::SUCCESS;
}

error_code ReadDriverAccumUpdates(FieldRange fields, ReadFailure& failure, DriverAccumUpdates& out) {
  bool has_execution_id = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "executionId") {
              has_execution_id = true;
              return ReadInt64(value, out.execution_id);
            }
            if (key == "accumUpdates") {
              // [[accumulator id, value]...]: Scala tuples, written as two-element arrays.
              return VisitArray(value, [&](ondemand::value& pair) -> error_code {
                AccumulableUpdate update;
                int position = 0;
                if (error_code error = VisitArray(pair, [&](ondemand::value& number) -> error_code {
                      std::int64_t& target = position == 0 ? update.accumulator_id : update.update;
                      if (position++ > 1) return simdjson::SUCCESS;
                      return ReadInt64(number, target);
                    })) {
                  return error;
                }
                if (position >= 2) out.updates.push_back(update);
                return simdjson::SUCCESS;
              });
            }
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_execution_id) return Missing(failure, "executionId");
  return simdjson::SUCCESS;
}

}  // namespace sparktrace::listener::events::json
