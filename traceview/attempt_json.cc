#include "traceview/attempt_json.h"

#include <algorithm>
#include <string_view>
#include <tuple>

#include "common/url_codec.h"
#include "traceview/airflow_task_view.h"
#include "traceview/attempt_findings.h"
#include "traceview/attempt_sections_json.h"
#include "traceview/attribute_writer.h"
#include "traceview/breakdown.h"
#include "traceview/critical_path.h"
#include "traceview/executor_series.h"
#include "traceview/span_bound.h"
#include "traceview/span_lanes.h"
#include "traceview/span_parents.h"
#include "traceview/span_progress.h"
#include "traceview/sql_executions_json.h"
#include "traceview/view_time.h"
#include "traceview/what_if_of_spans.h"
#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using nlohmann::ordered_json;
using tracing::Span;
using tracing::ToHex;

// Spans still running: a job or application the driver has not ended (the span builder ends them at
// the latest event time until it hears more), what runs inside such a job, and a Spark Connect
// operation the proxy has only sent a live snapshot of (Spark 4's progress) so far.
std::vector<bool> OpenSpans(std::span<const Span> spans,
                            const std::vector<std::optional<std::size_t>>& parent) {
  std::vector<bool> open(spans.size(), false);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto* job_status =
        tracing::AttributeValueOf<std::string>(spans[i].attributes, tracing::kSparkJobStatusKey);
    const auto* app_status =
        tracing::AttributeValueOf<std::string>(spans[i].attributes, tracing::kSparkAppStatusKey);
    open[i] = (job_status != nullptr && *job_status == "running") ||
              (app_status != nullptr && *app_status == "running") || IsRunningOperationSnapshot(spans[i]);
  }
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (open[i] || !parent[i] || !open[*parent[i]] || LaneOf(spans[i]) != Lane::kStage) continue;
    // A stage of a running job is open when it ends where the job does (at the latest event).
    open[i] = SpanEndNanos(spans[i]) >= SpanEndNanos(spans[*parent[i]]);
  }
  return open;
}

// Parent before children, siblings by start time (then lane, then id), and each span's depth.
struct TreeOrder {
  std::vector<std::size_t> order;
  std::vector<int> depth;
  std::vector<bool> has_children;
};

TreeOrder OrderAsTree(std::span<const Span> spans, const std::vector<std::optional<std::size_t>>& parent) {
  TreeOrder tree;
  tree.depth.assign(spans.size(), 0);
  tree.has_children.assign(spans.size(), false);
  std::vector<std::vector<std::size_t>> children(spans.size());
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (parent[i]) {
      children[*parent[i]].push_back(i);
      tree.has_children[*parent[i]] = true;
    } else {
      roots.push_back(i);
    }
  }
  // Sort keys computed once: the comparator runs n log n times on 20,000-span traces.
  struct SortKey {
    std::uint64_t start;
    Lane lane;
    tracing::SpanId id;
  };
  std::vector<SortKey> keys;
  keys.reserve(spans.size());
  for (const Span& span : spans)
    keys.push_back(SortKey{span.start_time_unix_nano, LaneOf(span), span.span_id});
  const auto by_start = [&keys](std::size_t a, std::size_t b) {
    return std::tie(keys[a].start, keys[a].lane, keys[a].id) <
           std::tie(keys[b].start, keys[b].lane, keys[b].id);
  };
  std::sort(roots.begin(), roots.end(), by_start);
  for (auto& siblings : children) std::sort(siblings.begin(), siblings.end(), by_start);
  // Iterative depth-first walk: a 20,000-span trace must not recurse 20,000 deep on a bad parent chain.
  std::vector<std::pair<std::size_t, int>> stack;
  std::vector<bool> visited(spans.size(), false);
  for (auto root = roots.rbegin(); root != roots.rend(); ++root) stack.emplace_back(*root, 0);
  while (!stack.empty()) {
    const auto [index, depth] = stack.back();
    stack.pop_back();
    if (visited[index]) continue;
    visited[index] = true;
    tree.order.push_back(index);
    tree.depth[index] = depth;
    for (auto child = children[index].rbegin(); child != children[index].rend(); ++child) {
      stack.emplace_back(*child, depth + 1);
    }
  }
  // Spans on a parent cycle are reachable from no root; list them at the top level rather than lose them.
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!visited[i]) tree.order.push_back(i);
  }
  return tree;
}

// The Spark application a span ran in: spark.app.id on the span itself, or on the lifecycle span of its
// operation (the driver's side of it), or on an ancestor (an application trace's root).
std::vector<std::string> ApplicationIds(std::span<const Span> spans,
                                        const std::vector<std::optional<std::size_t>>& parent) {
  std::vector<std::string> own(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto* app = tracing::AttributeValueOf<std::string>(spans[i].attributes, tracing::kSparkAppIdKey);
    if (app == nullptr || app->empty()) continue;
    own[i] = *app;
    // A lifecycle span names the application for its whole operation.
    if (parent[i] && LaneOf(spans[i]) == Lane::kLifecycle && own[*parent[i]].empty()) own[*parent[i]] = *app;
  }
  std::vector<std::string> resolved(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    std::optional<std::size_t> current = i;
    for (std::size_t steps = 0; current && steps <= spans.size(); ++steps) {
      if (!own[*current].empty()) {
        resolved[i] = own[*current];
        break;
      }
      current = parent[*current];
    }
  }
  return resolved;
}

// The page of this span in a Spark UI rooted at `base` (a driver's UI, or a History Server's
// application path): jobs and stages have their own pages, the rest the application's job list.
std::string SparkPage(std::string base, const Span& span) {
  while (!base.empty() && base.back() == '/') base.pop_back();
  switch (LaneOf(span)) {
    case Lane::kJob:
      if (const auto job = IntAttribute(span, tracing::kSparkJobIdKey))
        return base + "/jobs/job/?id=" + std::to_string(*job);
      break;
    case Lane::kStage:
      if (const auto stage = IntAttribute(span, tracing::kSparkStageIdKey)) {
        return base + "/stages/stage/?id=" + std::to_string(*stage) +
               "&attempt=" + std::to_string(IntAttribute(span, tracing::kSparkStageAttemptKey).value_or(0));
      }
      break;
    default:
      break;
  }
  return base + "/jobs/";
}

// "progress": Spark 4's latest execution_progress figures of an operation span, else null.
void WriteProgress(JsonWriter& out, const std::optional<SpanProgress>& progress) {
  out.Key("progress");
  if (!progress) {
    out.Null();
    return;
  }
  out.BeginObject();
  out.Key("stages_done").Int(progress->stages_done).Key("stages_total").Int(progress->stages_total);
  out.Key("tasks_done").Int(progress->tasks_done).Key("tasks_total").Int(progress->tasks_total);
  out.Key("input_bytes_read").Int(progress->input_bytes_read);
  out.Key("inflight_tasks").Int(progress->inflight_tasks);
  out.Key("updates").Int(progress->updates);
  out.EndObject();
}

// How many spans the attempt has and how many are listed (span_bound.h), and the summary of the rest.
void WriteSpanBound(JsonWriter& out, std::size_t total, const BoundedSpans& listed, std::size_t max_spans,
                    const Breakdown& breakdown) {
  const auto count = [](std::size_t n) { return static_cast<std::int64_t>(n); };
  out.Key("span_bound").BeginObject();
  out.Key("max_spans").Int(count(max_spans)).Key("total").Int(count(total));
  out.Key("listed").Int(count(listed.order.size())).Key("summarised").Int(count(total - listed.order.size()));
  out.EndObject();
  const double bucket_ms =
      std::max(breakdown.end_ms - breakdown.start_ms, 0.0) / static_cast<double>(kSpanGroupBuckets);
  out.Key("span_groups").BeginArray();
  for (const SpanGroup& group : listed.groups) {
    out.BeginObject();
    out.Key("lane").String(LaneName(group.lane)).Key("name").String(group.name).Key("label").String(group.label);
    out.Key("count").Int(group.count).Key("error_count").Int(group.error_count);
    out.Key("start_ms").Double(group.start_ms).Key("end_ms").Double(group.end_ms);
    out.Key("busy_ms").Double(group.busy_ms);
    out.Key("buckets").BeginObject();
    out.Key("start_ms").Double(breakdown.start_ms).Key("bucket_ms").Double(bucket_ms);
    out.Key("starts").BeginArray();
    for (const std::int64_t starts : group.buckets) out.Int(starts);
    out.EndArray().EndObject();
    out.EndObject();
  }
  out.EndArray();
}

}  // namespace

std::string AttemptJson(std::span<const Span> spans, const Breakdown& breakdown,
                        const AttemptContext& context) {
  const std::vector<std::optional<std::size_t>> parent = ParentIndices(spans);
  const CriticalPath critical = ComputeCriticalPath(spans, parent);
  const ExecutorSeries executors = ComputeExecutorSeries(spans, breakdown.start_ms, breakdown.end_ms);
  const std::vector<bool> open = OpenSpans(spans, parent);
  std::vector<SpanFindings> span_findings;
  std::vector<FindingEntry> findings = CollectFindings(spans, span_findings);
  std::vector<bool> on_path(spans.size(), false);
  for (std::size_t index : critical.span_indices) on_path[index] = true;

  const TreeOrder tree = OrderAsTree(spans, parent);
  const std::vector<std::string> app_ids = ApplicationIds(spans, parent);
  const bool in_progress = std::find(open.begin(), open.end(), true) != open.end();
  AddRegressionFinding(spans, parent, context.history, !in_progress, findings, span_findings);
  ordered_json finding_list = ordered_json::array();
  for (FindingEntry& finding : findings) finding_list.push_back(std::move(finding.json));
  ordered_json tries = ordered_json::array();
  for (const AttemptLink& link : context.tries) tries.push_back(LinkJson(link));
  ordered_json trace_ids = ordered_json::array();
  for (const std::string& trace_id : context.trace_ids) trace_ids.push_back(trace_id);

  ordered_json identity = nullptr;
  if (context.airflow) {
    identity = {{"dag_id", context.key.dag_id},
                {"task_id", context.key.task_id},
                {"run_id", context.key.run_id},
                {"try_number", context.key.try_number},
                {"map_index", context.key.map_index}};
  }
  const ordered_json head = {
      {"schema", "sparktrace.attempt/1"},
      {"kind", context.airflow ? "airflow" : "trace"},
      {"identity", std::move(identity)},
      {"name", context.name},
      {"trace_ids", std::move(trace_ids)},
      {"state", in_progress ? "running" : context.state},
      {"in_progress", in_progress},
      {"start_ms", breakdown.start_ms},
      {"end_ms", breakdown.end_ms},
      {"wall_ms", breakdown.wall_ms()},
      {"tries", std::move(tries)},
      {"previous_run", context.previous_run ? LinkJson(*context.previous_run) : ordered_json(nullptr)},
      {"next_run", context.next_run ? LinkJson(*context.next_run) : ordered_json(nullptr)},
      {"airflow_task", AirflowTaskJson(FindAirflowTask(spans, parent, breakdown))},
      {"breakdown", BreakdownJson(breakdown)},
      {"cost", CostJson(spans, breakdown, context.prices)},
      {"what_if", WhatIfJsonOfSpans(spans, breakdown.start_ms, breakdown.end_ms)},
      {"findings", std::move(finding_list)},
      {"history", HistoryJson(context.history)},
      {"downloads", {{"chrome_trace", context.chrome_trace_href}, {"otlp_json", context.otlp_href}}},
  };

  // The spans (20,000 for a large attempt) and the critical path (as many stages) are most of the
  // answer: written straight to text; the rest, small, through nlohmann.
  JsonWriter out;
  out.BeginObject();
  for (const auto& [key, value] : head.items()) out.Key(key).Raw(tracing::DumpJson(value));
  out.Key("executors").BeginObject();
  out.Key("known").Bool(executors.known).Key("max").Int(executors.max).Key("series").BeginArray();
  for (const ExecutorPoint& point : executors.points) {
    out.BeginObject().Key("t_ms").Double(point.t_ms).Key("count").Int(point.count).EndObject();
  }
  out.EndArray().EndObject();
  // Each span's id in hex once: the path, the spans and their parents all print it.
  std::vector<std::string> hex_ids;
  hex_ids.reserve(spans.size());
  for (const Span& span : spans) hex_ids.push_back(ToHex(span.span_id));
  out.Key("critical_path").BeginObject();
  out.Key("known").Bool(critical.stage_dependencies_known);
  out.Key("span_ids").BeginArray();
  for (std::size_t index : critical.span_indices) out.String(hex_ids[index]);
  out.EndArray();
  out.Key("segments").BeginArray();
  for (const PathSegment& segment : critical.segments) {
    out.BeginObject().Key("span_id").String(hex_ids[segment.span_index]);
    out.Key("start_ms").Double(segment.start_ms).Key("end_ms").Double(segment.end_ms).EndObject();
  }
  out.EndArray();
  out.Key("ms").Double(critical.ms);
  out.Key("basis").String(critical.stage_dependencies_known
                              ? "stage parent ids and job/operation order"
                              : "job and operation order (stages carry no parent ids)");
  out.EndObject();
  out.Key("sql_executions");
  WriteSqlExecutions(out, spans, hex_ids, parent);
  // Every figure above is of all the spans; the list is bounded (span_bound.h).
  std::vector<bool> pinned(spans.size(), false);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    pinned[i] = on_path[i] || open[i] || !span_findings[i].ids.empty();
  }
  const BoundedSpans listed = BoundSpans(spans, parent, tree.order, tree.depth, tree.has_children, pinned,
                                         context.max_spans, breakdown.start_ms, breakdown.end_ms);
  out.Key("spans").BeginArray();
  std::string trace_hex;
  tracing::TraceId trace_of_hex{};
  for (std::size_t index : listed.order) {
    const Span& span = spans[index];
    if (trace_hex.empty() || span.trace_id != trace_of_hex) {  // an attempt is nearly always one trace
      trace_hex = ToHex(span.trace_id);
      trace_of_hex = span.trace_id;
    }
    const Lane lane = LaneOf(span);
    out.BeginObject();
    out.Key("id").String(hex_ids[index]);
    out.Key("parent_id")
        .String(parent[index] ? std::string_view(hex_ids[*parent[index]]) : std::string_view());
    out.Key("trace_id").String(trace_hex);
    out.Key("depth").Int(tree.depth[index]);
    out.Key("has_children").Bool(tree.has_children[index]);
    out.Key("name").String(span.name);
    out.Key("label").String(SpanLabel(span));
    out.Key("lane").String(LaneName(lane));
    out.Key("start_ms").Double(SpanStartMs(span));
    out.Key("end_ms").Double(SpanEndMs(span));
    out.Key("open").Bool(open[index]);
    WriteProgress(out, ProgressOf(span));
    out.Key("status").String(StatusName(span.status_code));
    out.Key("status_message").String(span.status_message);
    out.Key("attributes");
    // A SQL plan (up to --sql-plan-max-bytes per execution) is served on its own (sql_executions_json.h).
    WriteAttributes(out, span.attributes, tracing::kSparkSqlPlanKey);
    out.Key("events").BeginArray();
    for (const tracing::SpanEvent& event : span.events) {
      out.BeginObject();
      out.Key("name").String(event.name);
      out.Key("time_ms").Double(NanosToMs(event.time_unix_nano));
      out.Key("attributes");
      WriteAttributes(out, event.attributes);
      out.EndObject();
    }
    out.EndArray();
    out.Key("finding_ids").BeginArray();
    for (const std::string& id : span_findings[index].ids) out.String(id);
    out.EndArray();
    out.Key("finding_keys").BeginArray();
    for (const std::string& key : span_findings[index].keys) out.String(key);
    out.EndArray();
    out.Key("critical").Bool(on_path[index]);
    out.Key("links").BeginObject();
    const bool spark_side = lane == Lane::kJob || lane == Lane::kStage || lane == Lane::kLifecycle ||
                            lane == Lane::kApplication || lane == Lane::kOperation;
    if (spark_side && !context.spark_ui_url.empty()) {
      out.Key("spark_ui").String(SparkPage(context.spark_ui_url, span));
    } else {
      out.Key("spark_ui").Null();
    }
    if (spark_side && !context.history_server_url.empty() && !app_ids[index].empty()) {
      std::string base = context.history_server_url;
      while (!base.empty() && base.back() == '/') base.pop_back();
      out.Key("history_server")
          .String(SparkPage(base + "/history/" + EncodePathSegment(app_ids[index]), span));
    } else {
      out.Key("history_server").Null();
    }
    out.EndObject();
    out.EndObject();
  }
  out.EndArray();
  WriteSpanBound(out, spans.size(), listed, context.max_spans, breakdown);
  out.EndObject();
  return out.Take();
}

}  // namespace sparktrace::traceview