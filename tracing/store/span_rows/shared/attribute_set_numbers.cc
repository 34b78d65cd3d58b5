#include "tracing/store/span_rows/shared/attribute_set_numbers.h"

#include <algorithm>
#include <functional>

#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

constexpr std::int64_t kHalfLeaseNanos = kAttributeSetLease.count() / 2;

}  // namespace

std::optional<std::int64_t> BeginSharedRow(const Span& span, std::int64_t now, std::string& encoded,
                                           SharedAttributeSplitter& split) {
  encoded.clear();
  if (!split.Split(span.attributes)) {
    AppendCompactAttributes(encoded, span.attributes);
    return std::nullopt;
  }
  return std::max(now, ToSql(span.start_time_unix_nano));
}

AttributeSetNumbers::Lookup AttributeSetNumbers::Find(const std::string& set, std::int64_t stamp) {
  // A session's calls come together: most spans name the set the span before them named.
  if (last_ && last_->second.leased >= stamp - kHalfLeaseNanos && last_->first == set)
    return {State::kFresh, last_->second.id};
  last_ = nullptr;
  const auto found = numbers_.find(set);
  if (found != numbers_.end()) {
    if (found->second.leased < stamp - kHalfLeaseNanos) return {State::kStale, 0};
    last_ = &*found;
    return {State::kFresh, found->second.id};
  }
  if (met_once_.insert(std::hash<std::string>{}(set)).second) {
    if (met_once_.size() > kCachedAttributeSets) met_once_.clear();
    return {State::kFirstMet, 0};
  }
  return {State::kUnknown, 0};
}

void AttributeSetNumbers::Remember(const std::string& set, std::int64_t id, std::int64_t stamp) {
  if (const auto found = numbers_.find(set); found != numbers_.end()) {
    found->second = Numbered{id, stamp};
    last_ = &*found;
    return;
  }
  if (numbers_.size() >= kCachedAttributeSets) numbers_.clear();
  last_ = &*numbers_.emplace(set, Numbered{id, stamp}).first;
}

}  // namespace sparktrace::tracing::store
