#include "traceview/chrome_trace.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "traceview/span_lanes.h"
#include "traceview/view_time.h"
#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPid = 1;

// Attributes worth carrying into the viewer's details pane; the rest stay in the OTLP download.
constexpr std::array<std::string_view, 10> kArgKeys = {tracing::kRpcMethodKey,
                                                       tracing::kRpcGrpcStatusCodeKey,
                                                       tracing::kSparkConnectOperationIdKey,
                                                       tracing::kSparkConnectResultRowsKey,
                                                       tracing::kSparkJobIdKey,
                                                       tracing::kSparkJobStatusKey,
                                                       tracing::kSparkStageIdKey,
                                                       tracing::kSparkStageAttemptKey,
                                                       tracing::kSparkStageParentIdsKey,
                                                       tracing::kSparkAppIdKey};

std::string_view TrackName(Lane lane) {
  static constexpr std::array<std::string_view, kLaneCount> kNames = {
      "airflow task", "rpcs", "operations", "lifecycles", "jobs", "stages", "phases", "application", "other"};
  return kNames[static_cast<std::size_t>(lane) % kLaneCount];
}

struct Track {
  int tid = 0;
  std::string name;
};

// Whole microseconds: integers survive every consumer's arithmetic, so events that touch in
// nanoseconds cannot overlap after rounding (flooring keeps the order of the ends and starts).
std::int64_t MicrosSince(std::uint64_t origin_nanos, std::uint64_t unix_nanos) {
  return static_cast<std::int64_t>((unix_nanos - origin_nanos) / 1000);
}

// Tracks lane by lane: each span goes to the lowest track of its lane that is free at its start
// (its last span ended at or before it), else to a new one. Returns each span's tid.
std::vector<int> AssignTracks(std::span<const tracing::Span> spans, std::vector<Track>& tracks) {
  std::array<std::vector<std::size_t>, kLaneCount> by_lane;
  for (std::size_t i = 0; i < spans.size(); ++i)
    by_lane[static_cast<std::size_t>(LaneOf(spans[i]))].push_back(i);
  std::vector<int> tid_of(spans.size(), 0);
  int next_tid = 1;
  for (std::size_t lane = 0; lane < kLaneCount; ++lane) {
    std::vector<std::size_t>& members = by_lane[lane];
    std::sort(members.begin(), members.end(), [&spans](std::size_t a, std::size_t b) {
      return std::tuple(SpanStartNanos(spans[a]), SpanEndNanos(spans[a]), a) <
             std::tuple(SpanStartNanos(spans[b]), SpanEndNanos(spans[b]), b);
    });
    using Busy = std::pair<std::uint64_t, int>;  // (end, track), the earliest end on top
    std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
    std::set<int> free;
    int track_count = 0;
    for (std::size_t index : members) {
      while (!busy.empty() && busy.top().first <= SpanStartNanos(spans[index])) {
        free.insert(busy.top().second);
        busy.pop();
      }
      int track = track_count;
      if (free.empty()) {
        ++track_count;
      } else {
        track = *free.begin();
        free.erase(free.begin());
      }
      busy.emplace(SpanEndNanos(spans[index]), track);
      tid_of[index] = next_tid + track;
    }
    const std::string base(TrackName(static_cast<Lane>(lane)));
    for (int track = 0; track < track_count; ++track) {
      tracks.push_back({next_tid + track, track == 0 ? base : base + " #" + std::to_string(track + 1)});
    }
    next_tid += track_count;
  }
  return tid_of;
}

Json Metadata(std::string_view name, int tid, Json args) {
  return Json{{"ph", "M"}, {"name", name}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

Json SpanArgs(const tracing::Span& span) {
  Json args = Json::object();
  args["span_id"] = tracing::ToHex(span.span_id);
  if (tracing::IsValid(span.parent_span_id)) args["parent_id"] = tracing::ToHex(span.parent_span_id);
  args["status"] = StatusName(span.status_code);
  if (!span.status_message.empty()) args["status_message"] = span.status_message;
  for (std::string_view key : kArgKeys) {
    const auto found =
        std::find_if(span.attributes.begin(), span.attributes.end(),
                     [key](const tracing::Attribute& attribute) { return attribute.key == key; });
    if (found != span.attributes.end()) args[std::string(key)] = tracing::AttributeValueToJson(found->value);
  }
  return args;
}

Json CompleteEvent(const tracing::Span& span, int tid, std::uint64_t origin_nanos) {
  const std::int64_t ts = MicrosSince(origin_nanos, SpanStartNanos(span));
  return Json{{"ph", "X"},
              {"name", SpanLabel(span)},
              {"cat", LaneName(LaneOf(span))},
              {"pid", kPid},
              {"tid", tid},
              {"ts", ts},
              {"dur", MicrosSince(origin_nanos, SpanEndNanos(span)) - ts},
              {"args", SpanArgs(span)}};
}

}  // namespace

std::string ChromeTraceJson(std::span<const tracing::Span> spans, const ExecutorSeries& executors,
                            std::string_view title) {
  std::uint64_t origin_nanos = spans.empty() ? 0 : std::numeric_limits<std::uint64_t>::max();
  for (const tracing::Span& span : spans) origin_nanos = std::min(origin_nanos, SpanStartNanos(span));
  const double origin_ms =
      spans.empty() && !executors.points.empty() ? executors.points.front().t_ms : NanosToMs(origin_nanos);

  Json events = Json::array();
  events.push_back(Metadata("process_name", 0, Json{{"name", title}}));
  std::vector<Track> tracks;
  const std::vector<int> tid_of = AssignTracks(spans, tracks);
  for (const Track& track : tracks) {
    events.push_back(Metadata("thread_name", track.tid, Json{{"name", track.name}}));
    events.push_back(Metadata("thread_sort_index", track.tid, Json{{"sort_index", track.tid}}));
  }

  std::vector<std::size_t> order(spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&spans](std::size_t a, std::size_t b) {
    return std::tuple(SpanStartNanos(spans[a]), a) < std::tuple(SpanStartNanos(spans[b]), b);
  });
  for (std::size_t index : order) events.push_back(CompleteEvent(spans[index], tid_of[index], origin_nanos));

  if (executors.known) {
    for (const ExecutorPoint& point : executors.points) {
      events.push_back(Json{{"ph", "C"},
                            {"name", "executors"},
                            {"pid", kPid},
                            {"ts", std::llround((point.t_ms - origin_ms) * 1000)},
                            {"args", Json{{"executors", point.count}}}});
    }
  }

  Json trace{{"traceEvents", std::move(events)},
             {"displayTimeUnit", "ms"},
             {"otherData", Json{{"title", title},
                                {"start_ms", origin_ms},
                                {"span_count", spans.size()},
                                {"track_count", tracks.size()},
                                {"generator", "sparktrace"}}}};
  return tracing::DumpJson(trace);
}

}  // namespace sparktrace::traceview
