#include "traceview/breakdown.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "traceview/span_lanes.h"
#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

// Lowest precedence first: the sweep gives each instant the highest rank that covers it.
constexpr std::array<ViewPhase, kViewPhaseCount> kByPrecedence = {
    ViewPhase::kClient,  ViewPhase::kIdle,    ViewPhase::kResultTransfer,
    ViewPhase::kCompute, ViewPhase::kIoWrite, ViewPhase::kResourceWait};

constexpr std::size_t RankOf(ViewPhase phase) {
  for (std::size_t rank = 0; rank < kByPrecedence.size(); ++rank) {
    if (kByPrecedence[rank] == phase) return rank;
  }
  return 0;
}

// One end of a covering interval: +1 where it starts, -1 where it ends.
struct Edge {
  std::uint64_t time = 0;
  std::size_t rank = 0;
  int delta = 0;
};

void AddCover(std::vector<Edge>& edges, std::uint64_t start, std::uint64_t end, ViewPhase phase) {
  if (end <= start) return;
  edges.push_back({start, RankOf(phase), +1});
  edges.push_back({end, RankOf(phase), -1});
}

// What a span covers by itself (phase spans and spans in flight); result transfer is added apart.
std::optional<ViewPhase> CoverOf(const tracing::Span& span) {
  switch (LaneOf(span)) {
    case Lane::kPhase: {
      const tracing::SparkPhase phase =
          tracing::SparkPhaseNamed(PhaseNameOf(span)).value_or(tracing::SparkPhase::kIdle);
      // Idle (or unknown) covers nothing: the operation around it already makes it idle.
      if (phase == tracing::SparkPhase::kIdle) return std::nullopt;
      return tracing::ViewPhaseOf(phase);
    }
    case Lane::kRpc:
    case Lane::kOperation:
    case Lane::kLifecycle:
    case Lane::kJob:
    case Lane::kStage:
    case Lane::kApplication:
      return ViewPhase::kIdle;
    case Lane::kTask:
    case Lane::kOther:
      break;
  }
  return std::nullopt;
}

bool ReturnsRows(const tracing::Span& operation) {
  if (const std::optional<std::int64_t> rows = IntAttribute(operation, tracing::kSparkConnectResultRowsKey)) {
    return *rows > 0;
  }
  const std::string* plan_kind =
      tracing::AttributeValueOf<std::string>(operation.attributes, tracing::kSparkConnectPlanKindKey);
  return plan_kind != nullptr && *plan_kind == "root";
}

// For each row-returning operation: from the end of its last job to its own end.
void AddResultTransfer(std::span<const tracing::Span> spans, std::vector<Edge>& edges) {
  std::map<tracing::SpanId, std::uint64_t> last_job_end;  // by operation span id
  for (const tracing::Span& span : spans) {
    if (LaneOf(span) == Lane::kOperation && ReturnsRows(span)) last_job_end.emplace(span.span_id, 0);
  }
  if (last_job_end.empty()) return;
  for (const tracing::Span& span : spans) {
    if (LaneOf(span) != Lane::kJob) continue;
    if (auto found = last_job_end.find(span.parent_span_id); found != last_job_end.end()) {
      found->second = std::max(found->second, SpanEndNanos(span));
    }
  }
  for (const tracing::Span& span : spans) {
    if (LaneOf(span) != Lane::kOperation) continue;
    const auto found = last_job_end.find(span.span_id);
    // Without jobs there is no telling analysis from streaming: the operation stays idle.
    if (found == last_job_end.end() || found->second == 0) continue;
    AddCover(edges, found->second, SpanEndNanos(span), ViewPhase::kResultTransfer);
  }
}

// Appends [start, end) of `phase`, merged into the previous interval when that has the same phase.
void Append(Breakdown& breakdown, ViewPhase phase, std::uint64_t start, std::uint64_t end) {
  const double start_ms = NanosToMs(start);
  const double end_ms = NanosToMs(end);
  if (end_ms <= start_ms) return;  // closer than a double resolves at epoch scale
  std::vector<PhaseInterval>& intervals = breakdown.intervals;
  if (!intervals.empty() && intervals.back().phase == phase) {
    intervals.back().end_ms = end_ms;
  } else {
    intervals.push_back({phase, start_ms, end_ms});
  }
}

ViewPhase TopPhase(const std::array<int, kViewPhaseCount>& active) {
  for (std::size_t rank = kViewPhaseCount; rank-- > 1;) {
    if (active[rank] > 0) return kByPrecedence[rank];
  }
  return ViewPhase::kClient;
}

// Interval lengths are differences of nearby epoch values, exact in doubles (Sterbenz), so their
// sum already equals the wall time; the last interval's phase absorbs whatever rounding is left.
void Total(Breakdown& breakdown) {
  for (const PhaseInterval& interval : breakdown.intervals) {
    breakdown.ms[static_cast<std::size_t>(interval.phase)] += interval.end_ms - interval.start_ms;
  }
  if (breakdown.intervals.empty()) return;
  const auto last = static_cast<std::size_t>(breakdown.intervals.back().phase);
  double others = 0;
  for (std::size_t phase = 0; phase < kViewPhaseCount; ++phase) {
    if (phase != last) others += breakdown.ms[phase];
  }
  breakdown.ms[last] = breakdown.wall_ms() - others;
}

}  // namespace

Breakdown ComputeBreakdown(std::span<const tracing::Span> spans) {
  Breakdown breakdown;
  if (spans.empty()) return breakdown;
  std::uint64_t window_start = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t window_end = 0;
  std::vector<Edge> edges;
  edges.reserve(2 * spans.size());
  for (const tracing::Span& span : spans) {
    window_start = std::min(window_start, SpanStartNanos(span));
    window_end = std::max(window_end, SpanEndNanos(span));
    if (const std::optional<ViewPhase> cover = CoverOf(span)) {
      AddCover(edges, SpanStartNanos(span), SpanEndNanos(span), *cover);
    }
  }
  AddResultTransfer(spans, edges);
  breakdown.start_ms = NanosToMs(window_start);
  breakdown.end_ms = NanosToMs(window_end);

  std::sort(edges.begin(), edges.end(), [](const Edge& a, const Edge& b) { return a.time < b.time; });
  std::array<int, kViewPhaseCount> active{};
  std::uint64_t previous = window_start;
  for (std::size_t i = 0; i < edges.size();) {
    const std::uint64_t time = edges[i].time;
    Append(breakdown, TopPhase(active), previous, time);
    for (; i < edges.size() && edges[i].time == time; ++i) active[edges[i].rank] += edges[i].delta;
    previous = time;
  }
  Append(breakdown, ViewPhase::kClient, previous, window_end);
  Total(breakdown);
  return breakdown;
}

}  // namespace sparktrace::traceview
