#include "traceview/critical_path.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>

#include "traceview/span_lanes.h"
#include "traceview/span_parents.h"
#include "traceview/view_time.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::traceview {
namespace {

// Driver and proxy clocks are read in whole milliseconds: a unit that "ends" a hair after the next
// one starts still ran before it.
constexpr std::uint64_t kSlackNanos = 1'000'000;

// The spans with their relations, built once.
class SpanGraph {
 public:
  SpanGraph(std::span<const tracing::Span> spans, const std::vector<std::optional<std::size_t>>& parents)
      : spans_(spans), children_(spans.size()) {
    // Lanes once: comparators below ask for them n log n times, and LaneOf compares names.
    lanes_.reserve(spans.size());
    for (const tracing::Span& span : spans) lanes_.push_back(LaneOf(span));
    for (std::size_t i = 0; i < spans.size(); ++i) {
      if (parents[i]) children_[*parents[i]].push_back(i);
    }
  }

  const tracing::Span& span(std::size_t index) const { return spans_[index]; }
  std::uint64_t start(std::size_t index) const { return SpanStartNanos(spans_[index]); }
  std::uint64_t end(std::size_t index) const { return SpanEndNanos(spans_[index]); }
  std::size_t size() const { return spans_.size(); }
  Lane lane(std::size_t index) const { return lanes_[index]; }

  std::vector<std::size_t> ChildrenIn(std::size_t parent, Lane lane) const {
    std::vector<std::size_t> found;
    for (std::size_t child : children_[parent]) {
      if (lanes_[child] == lane) found.push_back(child);
    }
    return found;
  }

 private:
  std::span<const tracing::Span> spans_;
  std::vector<std::vector<std::size_t>> children_;
  std::vector<Lane> lanes_;
};

// Units run in order: from the one that ended last, back through the one that ended last at or
// before each one's start. The chain comes back latest first.
std::vector<std::size_t> ChainBack(const SpanGraph& graph, std::vector<std::size_t> units) {
  std::vector<std::size_t> chain;
  if (units.empty()) return chain;
  const auto by_end = [&graph](std::size_t a, std::size_t b) {
    return std::tuple(graph.end(a), graph.start(a), a) < std::tuple(graph.end(b), graph.start(b), b);
  };
  std::sort(units.begin(), units.end(), by_end);
  std::size_t current = units.back();
  chain.push_back(current);
  while (true) {
    const std::uint64_t limit = graph.start(current) + kSlackNanos;
    // Ends strictly decrease along the chain, so it ends even with zero-length units.
    auto bound = std::partition_point(units.begin(), units.end(), [&](std::size_t unit) {
      return graph.end(unit) <= limit && graph.end(unit) < graph.end(current);
    });
    // Within the slack, a unit that started after the current one did not run before it.
    while (bound != units.begin() && graph.start(*std::prev(bound)) > graph.start(current)) --bound;
    if (bound == units.begin()) break;
    current = *std::prev(bound);
    chain.push_back(current);
  }
  return chain;
}

std::optional<std::vector<std::int64_t>> ParentIds(const tracing::Span& stage) {
  const auto* ids =
      tracing::AttributeValueOf<std::vector<std::string>>(stage.attributes, tracing::kSparkStageParentIdsKey);
  if (ids == nullptr) return std::nullopt;
  std::vector<std::int64_t> parsed;
  for (const std::string& id : *ids) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), value);
    if (error == std::errc() && end == id.data() + id.size()) parsed.push_back(value);
  }
  return parsed;
}

// What the walk needs of each stage span, read from its attributes once (the walk visits every stage
// of every job on the path).
struct StageFacts {
  std::optional<std::int64_t> id;
  std::int64_t attempt = 0;
  std::optional<std::vector<std::int64_t>> parent_ids;
};

// Each stage id's span to follow: its latest attempt, the latest-ending one among equals. Hashed:
// the walk looks a parent up for every stage on every job's chain (20,000 on a big attempt).
using StageIndexById = std::unordered_map<std::int64_t, std::size_t>;

StageIndexById StageById(const SpanGraph& graph, const std::vector<std::size_t>& stages,
                         const std::vector<StageFacts>& facts) {
  StageIndexById by_id;
  by_id.reserve(stages.size());
  const auto rank = [&graph, &facts](std::size_t index) {
    return std::tuple(facts[index].attempt, graph.end(index));
  };
  for (std::size_t stage : stages) {
    if (!facts[stage].id) continue;
    auto [slot, inserted] = by_id.emplace(*facts[stage].id, stage);
    if (!inserted && rank(stage) > rank(slot->second)) slot->second = stage;
  }
  return by_id;
}

// Stage ids already on one job's chain; a parent cycle only comes from malformed input. Marks by
// generation, so that each job's walk starts empty without clearing (or allocating) a set.
class VisitedStageIds {
 public:
  void StartWalk() { ++generation_; }
  void Insert(std::int64_t id) { marks_[id] = generation_; }
  bool Contains(std::int64_t id) const {
    const auto found = marks_.find(id);
    return found != marks_.end() && found->second == generation_;
  }

 private:
  std::unordered_map<std::int64_t, std::uint64_t> marks_;
  std::uint64_t generation_ = 0;
};

// From the job's last-ending stage back through the parents that finished last.
std::vector<std::size_t> StageChain(const SpanGraph& graph, std::size_t job, const StageIndexById& stage_by_id,
                                    const std::vector<StageFacts>& facts, VisitedStageIds& visited) {
  std::vector<std::size_t> chain;
  const std::vector<std::size_t> stages = graph.ChildrenIn(job, Lane::kStage);
  if (stages.empty()) return chain;
  std::size_t current =
      *std::max_element(stages.begin(), stages.end(), [&graph](std::size_t a, std::size_t b) {
        return std::tuple(graph.end(a), graph.start(a)) < std::tuple(graph.end(b), graph.start(b));
      });
  visited.StartWalk();
  while (true) {
    chain.push_back(current);
    visited.Insert(facts[current].id.value_or(-1));
    std::optional<std::size_t> next;
    if (facts[current].parent_ids) {
      for (std::int64_t parent_id : *facts[current].parent_ids) {
        const auto parent = stage_by_id.find(parent_id);
        if (parent == stage_by_id.end() || visited.Contains(parent_id)) continue;  // skipped: no span
        if (!next || graph.end(parent->second) > graph.end(*next)) next = parent->second;
      }
    }
    if (!next) break;
    current = *next;
  }
  return chain;
}

class PathBuilder {
 public:
  explicit PathBuilder(const SpanGraph& graph)
      : graph_(graph), on_path_(graph.size(), 0), segment_span_(graph.size(), 0) {
    path_.stage_dependencies_known = true;
    std::vector<std::size_t> stages;
    facts_.resize(graph.size());
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (graph.lane(i) != Lane::kStage) continue;
      stages.push_back(i);
      facts_[i] = StageFacts{IntAttribute(graph.span(i), tracing::kSparkStageIdKey),
                             IntAttribute(graph.span(i), tracing::kSparkStageAttemptKey).value_or(0),
                             ParentIds(graph.span(i))};
      if (!facts_[i].parent_ids) path_.stage_dependencies_known = false;
    }
    if (path_.stage_dependencies_known) stage_by_id_ = StageById(graph, stages, facts_);
  }

  // An operation on the path: its job chain, or itself when it ran no job.
  void AddOperation(std::size_t operation) {
    on_path_[operation] = 1;
    const std::vector<std::size_t> jobs = ChainBack(graph_, graph_.ChildrenIn(operation, Lane::kJob));
    if (jobs.empty()) AddSegment(operation);
    for (std::size_t job : jobs) AddJob(job);
  }

  // A job on the path: its stage chain where known, else itself.
  void AddJob(std::size_t job) {
    on_path_[job] = 1;
    const std::vector<std::size_t> stages = path_.stage_dependencies_known
                                                ? StageChain(graph_, job, stage_by_id_, facts_, visited_)
                                                : std::vector<std::size_t>{};
    if (stages.empty()) AddSegment(job);
    for (std::size_t stage : stages) {
      on_path_[stage] = 1;
      AddSegment(stage);
    }
  }

  CriticalPath Finish() && {
    const auto by_start = [this](std::size_t a, std::size_t b) {
      return std::tuple(graph_.start(a), graph_.lane(a), a) < std::tuple(graph_.start(b), graph_.lane(b), b);
    };
    path_.span_indices = Marked(on_path_);
    std::sort(path_.span_indices.begin(), path_.span_indices.end(), by_start);
    std::vector<std::size_t> segment_spans = Marked(segment_span_);
    std::sort(segment_spans.begin(), segment_spans.end(), by_start);
    for (std::size_t index : segment_spans) {
      path_.segments.push_back({index, SpanStartMs(graph_.span(index)), SpanEndMs(graph_.span(index))});
    }
    path_.ms = UnionMs(path_.segments);
    return std::move(path_);
  }

 private:
  void AddSegment(std::size_t index) { segment_span_[index] = 1; }

  static std::vector<std::size_t> Marked(const std::vector<char>& marks) {
    std::vector<std::size_t> indices;
    for (std::size_t i = 0; i < marks.size(); ++i) {
      if (marks[i] != 0) indices.push_back(i);
    }
    return indices;
  }

  // Segments come sorted by start.
  static double UnionMs(const std::vector<PathSegment>& segments) {
    double total = 0;
    std::optional<PathSegment> run;
    for (const PathSegment& segment : segments) {
      if (run && segment.start_ms <= run->end_ms) {
        run->end_ms = std::max(run->end_ms, segment.end_ms);
        continue;
      }
      if (run) total += run->end_ms - run->start_ms;
      run = segment;
    }
    if (run) total += run->end_ms - run->start_ms;
    return total;
  }

  const SpanGraph& graph_;
  CriticalPath path_;
  StageIndexById stage_by_id_;
  std::vector<StageFacts> facts_;  // by span index; filled for stages only
  VisitedStageIds visited_;
  // By span index: on the path; a segment of it. Flags rather than ordered sets: both are sorted by
  // start at the end anyway.
  std::vector<char> on_path_;
  std::vector<char> segment_span_;
};

}  // namespace

CriticalPath ComputeCriticalPath(std::span<const tracing::Span> spans) {
  return ComputeCriticalPath(spans, ParentIndices(spans));
}

CriticalPath ComputeCriticalPath(std::span<const tracing::Span> spans,
                                 const std::vector<std::optional<std::size_t>>& parents) {
  const SpanGraph graph(spans, parents);
  std::vector<std::size_t> operations;
  std::vector<std::size_t> jobs;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Lane lane = LaneOf(spans[i]);
    if (lane == Lane::kOperation) operations.push_back(i);
    if (lane == Lane::kJob) jobs.push_back(i);
  }
  PathBuilder builder(graph);
  if (!operations.empty()) {
    for (std::size_t operation : ChainBack(graph, std::move(operations))) builder.AddOperation(operation);
  } else {
    for (std::size_t job : ChainBack(graph, std::move(jobs))) builder.AddJob(job);
  }
  return std::move(builder).Finish();
}

}  // namespace sparktrace::traceview
