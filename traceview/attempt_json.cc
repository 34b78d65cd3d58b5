#include "traceview/attempt_json.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "common/url_codec.h"
#include "traceview/breakdown.h"
#include "traceview/critical_path.h"
#include "traceview/executor_series.h"
#include "traceview/span_lanes.h"
#include "traceview/view_time.h"
#include "tracing/attribute_json.h"

namespace sparktrace::traceview {
namespace {

using nlohmann::ordered_json;
using tracing::Span;
using tracing::ToHex;

std::string IdKey(const tracing::SpanId& id) { return std::string(id.begin(), id.end()); }

// Spans still running: a job or application the driver has not ended (the span builder ends them at
// the latest event time until it hears more), and what runs inside such a job.
std::vector<bool> OpenSpans(std::span<const Span> spans,
                            const std::vector<std::optional<std::size_t>>& parent) {
  std::vector<bool> open(spans.size(), false);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const auto* job_status = tracing::AttributeValueOf<std::string>(spans[i].attributes, "spark.job.status");
    const auto* app_status = tracing::AttributeValueOf<std::string>(spans[i].attributes, "spark.app.status");
    open[i] = (job_status != nullptr && *job_status == "running") ||
              (app_status != nullptr && *app_status == "running");
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
  const auto by_start = [&spans](std::size_t a, std::size_t b) {
    return std::tuple(spans[a].start_time_unix_nano, LaneOf(spans[a]), IdKey(spans[a].span_id)) <
           std::tuple(spans[b].start_time_unix_nano, LaneOf(spans[b]), IdKey(spans[b].span_id));
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

std::string_view StatusName(tracing::StatusCode code) {
  switch (code) {
    case tracing::StatusCode::kOk:
      return "ok";
    case tracing::StatusCode::kError:
      return "error";
    case tracing::StatusCode::kUnset:
      break;
  }
  return "unset";
}

ordered_json StringList(const std::vector<tracing::Attribute>& attributes, std::string_view key) {
  ordered_json list = ordered_json::array();
  if (const auto* values = tracing::AttributeValueOf<std::vector<std::string>>(attributes, key)) {
    for (const std::string& value : *values) list.push_back(value);
  }
  return list;
}

struct FindingEntry {
  ordered_json json;
  double impact = 0;
};

// Findings from the sparktrace.finding span events, one per finding key (a stage finding is on the
// stage and on its operation's lifecycle span), with every span it is attached to.
std::vector<FindingEntry> CollectFindings(std::span<const Span> spans,
                                          std::vector<std::vector<std::string>>& ids_by_span) {
  std::map<std::string, std::size_t> by_key;
  std::vector<FindingEntry> findings;
  ids_by_span.assign(spans.size(), {});
  for (std::size_t i = 0; i < spans.size(); ++i) {
    for (const tracing::SpanEvent& event : spans[i].events) {
      if (event.name != "sparktrace.finding") continue;
      const auto text = [&event](std::string_view key) {
        const auto* value = tracing::AttributeValueOf<std::string>(event.attributes, key);
        return value == nullptr ? std::string() : *value;
      };
      const std::string id = text("finding.id");
      std::string key = text("finding.key");
      if (key.empty()) key = id + "@" + ToHex(spans[i].span_id);
      ids_by_span[i].push_back(id);
      auto [found, inserted] = by_key.emplace(key, findings.size());
      if (!inserted) {
        findings[found->second].json["span_ids"].push_back(ToHex(spans[i].span_id));
        continue;
      }
      const auto* impact = tracing::AttributeValueOf<double>(event.attributes, "finding.impact_seconds");
      const std::string recipe = text("finding.recipe");
      constexpr std::string_view kRecipeRoot = "docs/recipes/";
      const std::string recipe_path =
          recipe.starts_with(kRecipeRoot) ? recipe.substr(kRecipeRoot.size()) : recipe;
      // The recipe may name an anchor: "troubleshoot/slow-spark-jobs.md#idle-executors".
      ordered_json json = {{"id", id},
                           {"key", key},
                           {"severity", text("finding.severity")},
                           {"scope", text("finding.scope")},
                           {"title", text("finding.title")},
                           {"impact_seconds", impact == nullptr ? 0.0 : *impact},
                           {"evidence", StringList(event.attributes, "finding.evidence")},
                           {"fix", StringList(event.attributes, "finding.fix")},
                           {"related", StringList(event.attributes, "finding.related")},
                           {"recipe", recipe_path},
                           {"recipe_href", recipe_path.empty() ? "" : "/recipes/" + recipe_path},
                           {"span_ids", ordered_json::array({ToHex(spans[i].span_id)})}};
      findings.push_back(FindingEntry{std::move(json), impact == nullptr ? 0.0 : *impact});
    }
  }
  std::stable_sort(findings.begin(), findings.end(),
                   [](const FindingEntry& a, const FindingEntry& b) { return a.impact > b.impact; });
  return findings;
}

ordered_json EventsJson(const Span& span) {
  ordered_json events = ordered_json::array();
  for (const tracing::SpanEvent& event : span.events) {
    events.push_back({{"name", event.name},
                      {"time_ms", NanosToMs(event.time_unix_nano)},
                      {"attributes", tracing::AttributesToJson(event.attributes)}});
  }
  return events;
}

ordered_json LinkJson(const AttemptLink& link) {
  return {{"run_id", link.run_id},
          {"try_number", link.try_number},
          {"state", link.state},
          {"wall_ms", link.wall_ms},
          {"href", link.href}};
}

ordered_json PhaseObject(const std::array<double, kViewPhaseCount>& phases) {
  ordered_json object = ordered_json::object();
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    object[std::string(ViewPhaseName(static_cast<ViewPhase>(phase)))] = phases[phase];
  }
  return object;
}

ordered_json HistoryJson(const History& history) {
  ordered_json runs = ordered_json::array();
  for (const RunSummary& run : history.runs) {
    runs.push_back({{"run_id", run.run_id},
                    {"try_number", run.try_number},
                    {"state", run.state},
                    {"start_ms", run.start_ms},
                    {"wall_ms", run.wall_ms},
                    {"phases", PhaseObject(run.phases)},
                    {"href", run.href},
                    {"current", run.current}});
  }
  ordered_json baseline = nullptr;
  if (history.baseline) {
    baseline = {{"runs", history.baseline->runs},
                {"median_wall_ms", history.baseline->median_wall_ms},
                {"phases", PhaseObject(history.baseline->phases)}};
  }
  ordered_json comparison = ordered_json::array();
  for (const PhaseDelta& delta : history.comparison) {
    comparison.push_back({{"phase", ViewPhaseName(delta.phase)},
                          {"label", ViewPhaseLabel(delta.phase)},
                          {"current_ms", delta.current_ms},
                          {"median_ms", delta.median_ms},
                          {"delta_ms", delta.delta_ms}});
  }
  return {
      {"runs", std::move(runs)}, {"baseline", std::move(baseline)}, {"comparison", std::move(comparison)}};
}

ordered_json BreakdownJson(const Breakdown& breakdown) {
  ordered_json phases = ordered_json::array();
  const double wall = breakdown.wall_ms();
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    const auto view_phase = static_cast<ViewPhase>(phase);
    phases.push_back({{"phase", ViewPhaseName(view_phase)},
                      {"label", ViewPhaseLabel(view_phase)},
                      {"ms", breakdown.ms[phase]},
                      {"fraction", wall > 0 ? breakdown.ms[phase] / wall : 0.0}});
  }
  ordered_json intervals = ordered_json::array();
  for (const PhaseInterval& interval : breakdown.intervals) {
    intervals.push_back({{"phase", ViewPhaseName(interval.phase)},
                         {"start_ms", interval.start_ms},
                         {"end_ms", interval.end_ms}});
  }
  return {{"wall_ms", wall}, {"phases", std::move(phases)}, {"intervals", std::move(intervals)}};
}

}  // namespace

std::string AttemptHref(const tracing::TaskAttemptKey& key) {
  std::string href = "/tasks/" + EncodePathSegment(key.dag_id) + "/" + EncodePathSegment(key.task_id) + "/" +
                     EncodePathSegment(key.run_id) + "/" + std::to_string(key.try_number);
  if (key.map_index != -1) href += "?map_index=" + std::to_string(key.map_index);
  return href;
}

std::string TraceHref(std::string_view trace_id) { return "/traces/" + EncodePathSegment(trace_id); }

std::array<double, 6> PhaseMillis(std::span<const Span> spans) { return ComputeBreakdown(spans).ms; }

ordered_json AttemptJson(std::span<const Span> spans, const AttemptContext& context) {
  std::unordered_map<std::string, std::size_t> index_of;
  index_of.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) index_of.emplace(IdKey(spans[i].span_id), i);
  std::vector<std::optional<std::size_t>> parent(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!tracing::IsValid(spans[i].parent_span_id)) continue;
    if (auto found = index_of.find(IdKey(spans[i].parent_span_id));
        found != index_of.end() && found->second != i) {
      parent[i] = found->second;
    }
  }

  const Breakdown breakdown = ComputeBreakdown(spans);
  const CriticalPath critical = ComputeCriticalPath(spans);
  const ExecutorSeries executors = ComputeExecutorSeries(spans, breakdown.start_ms, breakdown.end_ms);
  const std::vector<bool> open = OpenSpans(spans, parent);
  std::vector<std::vector<std::string>> finding_ids;
  std::vector<FindingEntry> findings = CollectFindings(spans, finding_ids);
  std::vector<bool> on_path(spans.size(), false);
  for (std::size_t index : critical.span_indices) on_path[index] = true;

  const TreeOrder tree = OrderAsTree(spans, parent);
  ordered_json span_list = ordered_json::array();
  bool in_progress = false;
  for (std::size_t index : tree.order) {
    const Span& span = spans[index];
    in_progress = in_progress || open[index];
    ordered_json ids = ordered_json::array();
    for (const std::string& id : finding_ids[index]) ids.push_back(id);
    span_list.push_back({{"id", ToHex(span.span_id)},
                         {"parent_id", parent[index] ? ToHex(span.parent_span_id) : ""},
                         {"trace_id", ToHex(span.trace_id)},
                         {"depth", tree.depth[index]},
                         {"has_children", tree.has_children[index]},
                         {"name", span.name},
                         {"label", SpanLabel(span)},
                         {"lane", LaneName(LaneOf(span))},
                         {"start_ms", SpanStartMs(span)},
                         {"end_ms", SpanEndMs(span)},
                         {"open", static_cast<bool>(open[index])},
                         {"status", StatusName(span.status_code)},
                         {"status_message", span.status_message},
                         {"attributes", tracing::AttributesToJson(span.attributes)},
                         {"events", EventsJson(span)},
                         {"finding_ids", std::move(ids)},
                         {"critical", static_cast<bool>(on_path[index])},
                         {"links", {{"spark_ui", nullptr}}}});
  }

  ordered_json executor_points = ordered_json::array();
  for (const ExecutorPoint& point : executors.points) {
    executor_points.push_back({{"t_ms", point.t_ms}, {"count", point.count}});
  }
  ordered_json path_ids = ordered_json::array();
  for (std::size_t index : critical.span_indices) path_ids.push_back(ToHex(spans[index].span_id));
  ordered_json segments = ordered_json::array();
  for (const PathSegment& segment : critical.segments) {
    segments.push_back({{"span_id", ToHex(spans[segment.span_index].span_id)},
                        {"start_ms", segment.start_ms},
                        {"end_ms", segment.end_ms}});
  }
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
  return {
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
      {"breakdown", BreakdownJson(breakdown)},
      {"findings", std::move(finding_list)},
      {"spans", std::move(span_list)},
      {"executors",
       {{"known", executors.known}, {"max", executors.max}, {"series", std::move(executor_points)}}},
      {"critical_path",
       {{"known", critical.stage_dependencies_known},
        {"span_ids", std::move(path_ids)},
        {"segments", std::move(segments)},
        {"ms", critical.ms},
        {"basis", critical.stage_dependencies_known
                      ? "stage parent ids and job/operation order"
                      : "job and operation order (stages carry no parent ids)"}}},
      {"history", HistoryJson(context.history)},
      {"downloads",
       {{"chrome_trace", context.api_path + "/chrome-trace.json"},
        {"otlp_json", context.api_path + "/otlp.json"}}},
  };
}

}  // namespace sparktrace::traceview
