#include "traceview/span_parents.h"

#include <cstring>
#include <unordered_map>

namespace sparktrace::traceview {
namespace {

struct SpanIdHash {
  std::size_t operator()(const tracing::SpanId& id) const {
    std::uint64_t value = 0;
    std::memcpy(&value, id.data(), sizeof(value));  // span ids are random or derived: already spread
    return static_cast<std::size_t>(value);
  }
};

}  // namespace

std::vector<std::optional<std::size_t>> ParentIndices(std::span<const tracing::Span> spans) {
  std::unordered_map<tracing::SpanId, std::size_t, SpanIdHash> index_of;
  index_of.reserve(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) index_of.emplace(spans[i].span_id, i);
  std::vector<std::optional<std::size_t>> parents(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!tracing::IsValid(spans[i].parent_span_id)) continue;
    if (const auto found = index_of.find(spans[i].parent_span_id);
        found != index_of.end() && found->second != i) {
      parents[i] = found->second;
    }
  }
  return parents;
}

}  // namespace sparktrace::traceview
