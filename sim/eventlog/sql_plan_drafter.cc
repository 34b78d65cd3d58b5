#include "sim/eventlog/sql_plan_drafter.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "sim/eventlog/whole_number.h"

namespace sparktrace::sim::eventlog {
namespace {

constexpr std::int64_t kAccumulatorBase = 1'000'000;
constexpr std::int64_t kAccumulatorsPerExecution = 1000;
constexpr std::int64_t kDimensionRows = 50'000;      // customers: the clean broadcast side
constexpr std::int64_t kBroadcastRowBytes = 48;      // a hashed relation's bytes per row
constexpr std::int64_t kParquetRowsPerBatch = 4096;  // ColumnarToRow's batches

struct MetricSpec {
  const char* name;
  const char* type;
};

// Appends nodes and their metrics to a SqlPlanDraft.
class PlanBuilder {
 public:
  explicit PlanBuilder(SqlPlanDraft& draft) : draft_(draft) {}

  int Node(std::string name, std::string simple, std::initializer_list<MetricSpec> metrics = {}) {
    SqlNodeDraft node;
    node.name = std::move(name);
    node.simple = std::move(simple);
    for (const MetricSpec& spec : metrics) {
      node.metrics.push_back(static_cast<int>(draft_.metrics.size()));
      draft_.metrics.push_back(SqlMetricDraft{spec.name, spec.type});
    }
    draft_.nodes.push_back(std::move(node));
    return static_cast<int>(draft_.nodes.size()) - 1;
  }
  // A chain parent → child; returns the child.
  int Under(int parent, int child) {
    draft_.nodes[static_cast<std::size_t>(parent)].children.push_back(child);
    return child;
  }
  // The metric named `name` of `node`.
  int Metric(int node, std::string_view name) const {
    for (int metric : draft_.nodes[static_cast<std::size_t>(node)].metrics) {
      if (draft_.metrics[static_cast<std::size_t>(metric)].name == name) return metric;
    }
    return -1;
  }

 private:
  SqlPlanDraft& draft_;
};

// The metric ids the task values are written to.
struct PlanMetrics {
  int scan_rows, scan_time, c2r_rows, c2r_batches, filter_rows, join_rows;
  int partial_rows, partial_build, partial_peak, partial_spill, map_duration;
  int exchange_written, exchange_write_time, exchange_size, exchange_read, exchange_local, exchange_remote,
      exchange_fetch_wait;
  int final_rows, final_build, final_peak, final_spill, result_duration;
};

std::string StatementTable(const OperationPlan& plan) {
  return "sales.orders_" + std::to_string(plan.ordinal % 7);
}

}  // namespace

std::int64_t SqlAccumulatorId(std::int64_t execution_id, int metric) {
  return kAccumulatorBase + execution_id * kAccumulatorsPerExecution + metric;
}

void DraftSqlPlan(OperationPlan& plan, const ScenarioKnobs& knobs) {
  plan.sql_plan = SqlPlanDraft{};
  SqlPlanDraft& draft = plan.sql_plan;
  PlanBuilder b(draft);
  const bool nested_loop = knobs.nested_loop_build_rows > 0;
  const std::string orders = StatementTable(plan);

  int top = b.Node("AdaptiveSparkPlan", "AdaptiveSparkPlan isFinalPlan=true");
  int write_command = -1;
  if (plan.spec.write) {
    write_command =
        b.Under(top, b.Node("Execute InsertIntoHadoopFsRelationCommand",
                            "Execute InsertIntoHadoopFsRelationCommand s3a://warehouse/daily/out_" +
                                std::to_string(plan.ordinal) + ", false, Parquet, Overwrite",
                            {{"number of written files", "sum"},
                             {"written output", "size"},
                             {"number of output rows", "sum"},
                             {"number of dynamic part", "sum"}}));
    top = b.Under(write_command, b.Node("WriteFiles", "WriteFiles"));
  }
  const int result_codegen =
      b.Under(top, b.Node("WholeStageCodegen (3)", "WholeStageCodegen (3)", {{"duration", "timing"}}));
  const std::initializer_list<MetricSpec> aggregate_metrics = {{"number of output rows", "sum"},
                                                               {"time in aggregation build", "timing"},
                                                               {"peak memory", "size"},
                                                               {"spill size", "size"}};
  const int final_aggregate =
      b.Under(result_codegen,
              b.Node("HashAggregate", "HashAggregate(keys=[customer_id#12L], functions=[sum(amount#14)])",
                     aggregate_metrics));
  int node = b.Under(final_aggregate, b.Node("InputAdapter", "InputAdapter"));
  const int shuffle_read =
      b.Under(node, b.Node("AQEShuffleRead", "AQEShuffleRead coalesced", {{"number of partitions", "sum"}}));
  node = b.Under(shuffle_read, b.Node("ShuffleQueryStage", "ShuffleQueryStage 0"));
  const int exchange = b.Under(
      node,
      b.Node("Exchange", "Exchange hashpartitioning(customer_id#12L, 200), ENSURE_REQUIREMENTS, [plan_id=41]",
             {{"shuffle records written", "sum"},
              {"shuffle write time", "nsTiming"},
              {"records read", "sum"},
              {"local bytes read", "size"},
              {"fetch wait time", "timing"},
              {"remote bytes read", "size"},
              {"data size", "size"}}));
  const int map_codegen =
      b.Under(exchange, b.Node("WholeStageCodegen (2)", "WholeStageCodegen (2)", {{"duration", "timing"}}));
  const int partial_aggregate =
      b.Under(map_codegen, b.Node("HashAggregate",
                                  "HashAggregate(keys=[customer_id#12L], functions=[partial_sum(amount#14)])",
                                  aggregate_metrics));
  node = b.Under(partial_aggregate, b.Node("Project", "Project [customer_id#12L, amount#14]"));
  const int join =
      nested_loop
          ? b.Under(node, b.Node("BroadcastNestedLoopJoin",
                                 "BroadcastNestedLoopJoin BuildRight, Inner, ((amount#14 >= low#31) AND "
                                 "(amount#14 < high#32))",
                                 {{"number of output rows", "sum"}}))
          : b.Under(node, b.Node("BroadcastHashJoin",
                                 "BroadcastHashJoin [customer_id#12L], [id#30L], Inner, BuildRight, false",
                                 {{"number of output rows", "sum"}}));
  const int filter =
      b.Under(join, b.Node("Filter", "Filter (isnotnull(order_date#15) AND (order_date#15 >= 2026-11-01))",
                           {{"number of output rows", "sum"}}));
  const int to_rows =
      b.Under(filter, b.Node("ColumnarToRow", "ColumnarToRow",
                             {{"number of output rows", "sum"}, {"number of input batches", "sum"}}));
  const std::initializer_list<MetricSpec> scan_metrics = {{"number of output rows", "sum"},
                                                          {"number of files read", "sum"},
                                                          {"metadata time", "timing"},
                                                          {"size of files read", "size"},
                                                          {"scan time", "nsTiming"}};
  const int scan = b.Under(
      to_rows,
      b.Node("Scan parquet " + orders,
             "FileScan parquet " + orders +
                 "[customer_id#12L,amount#14,order_date#15] Batched: true, DataFilters: "
                 "[isnotnull(order_date#15), (order_date#15 >= 2026-11-01)], Format: Parquet, Location: "
                 "InMemoryFileIndex(1 paths)[s3a://warehouse/sales/orders], PartitionFilters: [], "
                 "PushedFilters: [IsNotNull(order_date), GreaterThanOrEqual(order_date,2026-11-01)], "
                 "ReadSchema: struct<customer_id:bigint,amount:double,order_date:date>",
             scan_metrics));
  node = b.Under(join, b.Node("InputAdapter", "InputAdapter"));
  node = b.Under(node, b.Node("BroadcastQueryStage", "BroadcastQueryStage 1"));
  const int broadcast = b.Under(
      node,
      b.Node("BroadcastExchange",
             nested_loop
                 ? "BroadcastExchange IdentityBroadcastMode, [plan_id=57]"
                 : "BroadcastExchange HashedRelationBroadcastMode(List(input[0, bigint, false]),false), "
                   "[plan_id=57]",
             {{"data size", "size"},
              {"number of output rows", "sum"},
              {"time to collect", "timing"},
              {"time to build", "timing"},
              {"time to broadcast", "timing"}}));
  node =
      b.Under(broadcast, b.Node("WholeStageCodegen (1)", "WholeStageCodegen (1)", {{"duration", "timing"}}));
  node = b.Under(node, b.Node("Filter", nested_loop ? "Filter isnotnull(low#31)" : "Filter isnotnull(id#30L)",
                              {{"number of output rows", "sum"}}));
  node = b.Under(node, b.Node("ColumnarToRow", "ColumnarToRow",
                              {{"number of output rows", "sum"}, {"number of input batches", "sum"}}));
  const int dimension_scan = b.Under(
      node, b.Node(nested_loop ? "Scan parquet dim.amount_bands" : "Scan parquet dim.customers",
                   nested_loop ? "FileScan parquet dim.amount_bands[low#31,high#32,band#33] Batched: true, "
                                 "Format: Parquet, PartitionFilters: [], PushedFilters: [IsNotNull(low)]"
                               : "FileScan parquet dim.customers[id#30L,segment#31] Batched: true, "
                                 "Format: Parquet, PartitionFilters: [], PushedFilters: [IsNotNull(id)]",
                   scan_metrics));

  const PlanMetrics m{
      b.Metric(scan, "number of output rows"),
      b.Metric(scan, "scan time"),
      b.Metric(to_rows, "number of output rows"),
      b.Metric(to_rows, "number of input batches"),
      b.Metric(filter, "number of output rows"),
      b.Metric(join, "number of output rows"),
      b.Metric(partial_aggregate, "number of output rows"),
      b.Metric(partial_aggregate, "time in aggregation build"),
      b.Metric(partial_aggregate, "peak memory"),
      b.Metric(partial_aggregate, "spill size"),
      b.Metric(map_codegen, "duration"),
      b.Metric(exchange, "shuffle records written"),
      b.Metric(exchange, "shuffle write time"),
      b.Metric(exchange, "data size"),
      b.Metric(exchange, "records read"),
      b.Metric(exchange, "local bytes read"),
      b.Metric(exchange, "remote bytes read"),
      b.Metric(exchange, "fetch wait time"),
      b.Metric(final_aggregate, "number of output rows"),
      b.Metric(final_aggregate, "time in aggregation build"),
      b.Metric(final_aggregate, "peak memory"),
      b.Metric(final_aggregate, "spill size"),
      b.Metric(result_codegen, "duration"),
  };

  // Task values, and the running totals Spark writes as "Value", in the order tasks finished.
  std::vector<std::size_t> order(plan.tasks.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&plan](std::size_t first, std::size_t second) {
    return plan.tasks[first].finish_ms < plan.tasks[second].finish_ms;
  });
  std::map<int, std::int64_t> running;
  std::int64_t map_input_bytes = 0;
  int map_files = 0;
  for (std::size_t index : order) {
    TaskPlan& task = plan.tasks[index];
    task.sql_updates.clear();
    if (task.outcome != TaskOutcome::kSuccess || !task.has_metrics) continue;
    const TaskMetricsPlan& t = task.metrics;
    const double run_ms = static_cast<double>(t.run_ms);
    std::vector<std::pair<int, std::int64_t>> values;
    if (!plan.stages.at(static_cast<std::size_t>(task.stage)).result_stage) {
      const std::int64_t scanned = t.input_records;
      const std::int64_t kept = Round(static_cast<double>(scanned) * knobs.filter_kept_share);
      const std::int64_t joined =
          nested_loop ? kept : Round(static_cast<double>(kept) * knobs.join_rows_per_input_row);
      map_input_bytes += t.input_bytes;
      ++map_files;
      values = {{m.scan_rows, scanned},
                {m.scan_time, Round(0.35 * run_ms * 1e6)},
                {m.c2r_rows, scanned},
                {m.c2r_batches, (scanned + kParquetRowsPerBatch - 1) / kParquetRowsPerBatch},
                {m.filter_rows, kept},
                {m.join_rows, joined},
                {m.partial_rows, t.shuffle_records_written},
                {m.partial_build, Round(0.1 * run_ms)},
                {m.partial_peak, t.peak_execution_memory},
                {m.partial_spill, t.memory_spilled},
                {m.map_duration, Round(0.85 * run_ms)},
                {m.exchange_written, t.shuffle_records_written},
                {m.exchange_write_time, t.shuffle_write_ns},
                {m.exchange_size, t.shuffle_bytes_written}};
    } else {
      const std::int64_t output =
          plan.spec.write ? t.output_records : std::max<std::int64_t>(1, t.shuffle_records_read / 1000);
      values = {{m.exchange_read, t.shuffle_records_read},
                {m.exchange_local, t.local_bytes_read},
                {m.exchange_remote, t.remote_bytes_read},
                {m.exchange_fetch_wait, t.fetch_wait_ms},
                {m.final_rows, output},
                {m.final_build, Round(0.5 * run_ms)},
                {m.final_peak, t.peak_execution_memory},
                {m.final_spill, t.memory_spilled},
                {m.result_duration, Round(0.8 * run_ms)}};
    }
    for (const auto& [metric, value] : values) {
      running[metric] += value;
      task.sql_updates.push_back(SqlMetricUpdate{metric, value, running[metric]});
    }
  }

  // Driver-side values: the scans' file listing, the broadcast, the shuffle read's partitions, the
  // write's statistics.
  const std::int64_t build_rows = nested_loop ? knobs.nested_loop_build_rows : kDimensionRows;
  const std::int64_t extra_ms = knobs.broadcast_extra_ms;
  draft.driver_updates = {
      {b.Metric(scan, "number of files read"), map_files},
      {b.Metric(scan, "metadata time"), 20},
      {b.Metric(scan, "size of files read"), map_input_bytes},
      {b.Metric(dimension_scan, "number of files read"), 1},
      {b.Metric(dimension_scan, "metadata time"), 5},
      {b.Metric(dimension_scan, "size of files read"), build_rows * 24},
      {b.Metric(broadcast, "data size"), build_rows * kBroadcastRowBytes + knobs.broadcast_extra_bytes},
      {b.Metric(broadcast, "number of output rows"), build_rows},
      {b.Metric(broadcast, "time to collect"), 120 + Round(0.6 * static_cast<double>(extra_ms))},
      {b.Metric(broadcast, "time to build"), 30 + Round(0.15 * static_cast<double>(extra_ms))},
      {b.Metric(broadcast, "time to broadcast"), 60 + Round(0.25 * static_cast<double>(extra_ms))},
      {b.Metric(shuffle_read, "number of partitions"), plan.stages.size() > 1 ? plan.stages[1].num_tasks : 0},
  };
  if (write_command >= 0) {
    std::int64_t files = 0, bytes = 0, rows = 0;
    for (const TaskPlan& task : plan.tasks) {
      if (task.outcome != TaskOutcome::kSuccess || task.stage != 1) continue;
      ++files;
      bytes += task.metrics.output_bytes;
      rows += task.metrics.output_records;
    }
    draft.driver_updates.emplace_back(b.Metric(write_command, "number of written files"), files);
    draft.driver_updates.emplace_back(b.Metric(write_command, "written output"), bytes);
    draft.driver_updates.emplace_back(b.Metric(write_command, "number of output rows"), rows);
    draft.driver_updates.emplace_back(b.Metric(write_command, "number of dynamic part"), 0);
  }
}

}  // namespace sparktrace::sim::eventlog
