#include "tracing/store/increment/part_increment.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace sparktrace::tracing::store::task_index {
namespace {

// How far up a batch span's attempt is looked for. Spark's trees are a few levels deep (task attempt,
// operation, job, stage, phase); a deeper chain is recomputed rather than walked.
constexpr int kMaxWalk = 64;

// Where the walk up from a span ends: at the span with an identity that owns it, at a root without
// one (it belongs to no attempt, for good), or at a parent that is not stored (not yet, maybe).
enum class WalkEnd { kOwner, kRoot, kMissingParent };
struct Walk {
  WalkEnd end = WalkEnd::kRoot;
  std::optional<TaskAttemptKey> owner;
  std::string missing_parent;  // at kMissingParent
};

class OwnerWalk {
 public:
  OwnerWalk(const std::vector<BatchSpan>& batch, const StoredSpanById& stored_span)
      : stored_span_(stored_span) {
    for (const BatchSpan& span : batch) in_batch_.emplace(span.now.span_id, &span.now);
  }

  // nullopt: deeper than kMaxWalk (or a cycle).
  Result<std::optional<Walk>> From(const IndexSpan& span) {
    const IndexSpan* current = &span;
    for (int step = 0; step < kMaxWalk; ++step) {
      if (current->identity) return std::optional<Walk>(Walk{WalkEnd::kOwner, current->identity, ""});
      if (current->parent_id.empty()) return std::optional<Walk>(Walk{WalkEnd::kRoot, std::nullopt, ""});
      auto parent = Parent(current->parent_id);
      if (!parent.ok()) return parent.error();
      if (*parent == nullptr)
        return std::optional<Walk>(Walk{WalkEnd::kMissingParent, std::nullopt, current->parent_id});
      current = *parent;
    }
    return std::optional<Walk>();
  }

 private:
  // The batch's version of a span first, else the stored one (read once).
  Result<const IndexSpan*> Parent(const std::string& span_id) {
    if (auto it = in_batch_.find(span_id); it != in_batch_.end()) return it->second;
    auto cached = stored_.find(span_id);
    if (cached == stored_.end()) {
      auto read = stored_span_(span_id);
      if (!read.ok()) return read.error();
      cached = stored_.emplace(span_id, std::move(read).value()).first;
    }
    return cached->second ? &*cached->second : nullptr;
  }

  const StoredSpanById& stored_span_;
  std::unordered_map<std::string_view, const IndexSpan*> in_batch_;
  std::map<std::string, std::optional<IndexSpan>> stored_;  // map: pointers into it stay valid
};

bool SamePlace(const IndexSpan& before, const IndexSpan& now) {
  return before.parent_id == now.parent_id && before.identity == now.identity && before.name == now.name &&
         before.app_id == now.app_id;
}

// Adds a batch span to `part`, or false when the part's figures cannot be known without its other spans.
bool AddToPart(const BatchSpan& span, Part& part) {
  if (span.before) return ReplaceInPart(*span.before, span.now, part);
  // The part's application is the first a span names; two different ones need the span order.
  if (!span.now.app_id.empty() && !part.app_id.empty() && part.app_id != span.now.app_id) return false;
  AddSpan(span.now, part);
  return true;
}

// A trace without Airflow identity is one part, named by its application (the first span naming one)
// or else its root (the earliest span without a parent): every span of the batch is in it, unless one
// brings an identity (the trace becomes an Airflow trace) or may rename it.
std::optional<TraceIncrement> IncrementTraceWithoutIdentity(const StoredTraceIndex& stored,
                                                            const std::vector<BatchSpan>& batch) {
  TraceIncrement next;
  next.parts = stored.parts;
  const PartKey key = next.parts.begin()->first;
  Part& part = next.parts.begin()->second;
  for (const BatchSpan& span : batch) {
    const IndexSpan& now = span.now;
    if (now.identity || !now.finding_events.empty()) return std::nullopt;
    if (span.before) {
      const IndexSpan& before = *span.before;
      if (!before.finding_events.empty() || !SamePlace(before, now) || before.app_name != now.app_name ||
          (now.parent_id.empty() && before.start != now.start))
        return std::nullopt;
    } else if (now.parent_id.empty() || !now.app_name.empty()) {
      return std::nullopt;
    }
    if (!AddToPart(span, part)) return std::nullopt;
  }
  next.changed.insert(key);
  return next;
}

}  // namespace

Result<std::optional<TraceIncrement>> IncrementTrace(const StoredTraceIndex& stored,
                                                     const std::vector<BatchSpan>& batch,
                                                     const StoredSpanById& stored_span) {
  const std::optional<TraceIncrement> kRecompute;
  if (!stored.exact || !stored.awaited || stored.parts.empty()) return kRecompute;
  if (stored.parts.size() == 1 && !stored.parts.begin()->first.airflow)
    return IncrementTraceWithoutIdentity(stored, batch);
  for (const auto& [key, part] : stored.parts) {
    if (!key.airflow) return kRecompute;
  }
  TraceIncrement next;
  next.parts = stored.parts;
  next.awaited = *stored.awaited;
  OwnerWalk walk(batch, stored_span);
  for (const BatchSpan& span : batch) {
    // An awaited parent may move the spans below it into an attempt; findings are counted once per
    // key, and the keys are not kept.
    if (!span.now.finding_events.empty() || next.awaited.contains(span.now.span_id)) return kRecompute;
    if (span.before && (!span.before->finding_events.empty() || !SamePlace(*span.before, span.now)))
      return kRecompute;
    auto walked = walk.From(span.now);
    if (!walked.ok()) return walked.error();
    if (!*walked) return kRecompute;
    const Walk& found = **walked;
    if (found.end == WalkEnd::kRoot) continue;  // in no attempt, as before
    if (found.end == WalkEnd::kMissingParent) {
      next.awaited.insert(found.missing_parent);  // in no attempt until that parent comes
      continue;
    }
    const PartKey key{true, *found.owner, ""};
    auto [at, created] = next.parts.try_emplace(key);
    Part& part = at->second;
    if (created) part.name = found.owner->dag_id + "." + found.owner->task_id;
    if ((created && span.before) || !AddToPart(span, part)) return kRecompute;
    next.changed.insert(key);
  }
  return std::optional<TraceIncrement>(std::move(next));
}

AwaitedParents AwaitedParentsOf(const std::vector<IndexSpan>& spans) {
  AwaitedParents awaited;
  // Nothing waits in a trace without identity, nor where every span's walk ends where it starts (its
  // own identity, or no parent): a call per trace, with or without identity, skips the map below.
  const bool any_identity = std::any_of(spans.begin(), spans.end(),
                                        [](const IndexSpan& span) { return span.identity.has_value(); });
  const bool any_walk = std::any_of(spans.begin(), spans.end(), [](const IndexSpan& span) {
    return !span.identity && !span.parent_id.empty();
  });
  if (!any_identity || !any_walk) return awaited;
  std::unordered_map<std::string_view, std::size_t> by_id;
  by_id.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) by_id.emplace(spans[i].span_id, i);

  // Each span's walk decided once: in an attempt or under a root (kDone), or waiting (kWaiting).
  enum : std::uint8_t { kUndecided, kDone, kWaiting };
  std::vector<std::uint8_t> end(spans.size(), kUndecided);
  std::vector<std::size_t> path;
  for (std::size_t first = 0; first < spans.size(); ++first) {
    path.clear();
    std::size_t current = first;
    std::uint8_t found = kDone;
    for (std::size_t step = 0; step <= spans.size(); ++step) {  // bounded: a parent cycle ends here
      if (end[current] != kUndecided) {
        found = end[current];
        break;
      }
      path.push_back(current);
      const IndexSpan& span = spans[current];
      if (span.identity || span.parent_id.empty()) break;
      const auto parent = by_id.find(span.parent_id);
      if (parent == by_id.end()) {
        found = kWaiting;
        awaited.insert(span.parent_id);
        break;
      }
      current = parent->second;
    }
    for (std::size_t member : path) end[member] = found;
  }
  return awaited;
}

std::optional<std::string> AwaitedParentsText(const AwaitedParents& awaited) {
  if (awaited.size() > kMaxAwaitedParents) return std::nullopt;
  std::string text;
  for (const std::string& id : awaited) {
    if (!text.empty()) text += ',';
    text += id;
  }
  return text;
}

AwaitedParents ParseAwaitedParents(std::string_view text) {
  AwaitedParents awaited;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    awaited.emplace(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return awaited;
}

}  // namespace sparktrace::tracing::store::task_index
