#include "tracing/store/span_rows/shared/attribute_set_numbers.h"

#include <functional>

namespace sparktrace::tracing::store {
namespace {

constexpr std::int64_t kHalfLeaseNanos = kAttributeSetLease.count() / 2;

}  // namespace

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
