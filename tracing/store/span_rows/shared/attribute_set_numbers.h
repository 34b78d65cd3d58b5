#pragma once
// What a writer remembers of the attribute sets it numbered (shared_attributes.h), whichever store
// keeps them: a set's bytes to its id and the lease stamp the writer last gave it, and which sets it
// has met only once. Both stores lease a set the same way (sqlite/rows/sqlite_attribute_sets.h says
// why retention may then remove it without an index from sets to rows): a cached id is used while the
// writer's stamp is no older than half a lease before the span's stamp, after which the store stamps
// (or numbers) the set again.
//
// A set is numbered from its second span on: a client that opens a Spark Connect session for every
// call would otherwise get a set row (and its UNIQUE entry) per call, more than its attributes inline.
//
// Bounded: each cache holds at most kCachedAttributeSets entries and starts again empty when full.
// Threads: one writer's (not thread-safe).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "tracing/span.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"

namespace sparktrace::tracing::store {

inline constexpr std::chrono::nanoseconds kAttributeSetLease = std::chrono::hours(1);
// A session has a few sets (one per shape of call: with or without a time to first response, its
// method's extra keys); this many covers thousands of sessions at once.
inline constexpr std::size_t kCachedAttributeSets = 4096;

// How a store with sets begins a span's row: `encoded` cleared, then either the compact form, when the
// span's attributes keep it (SplitSharedAttributes says no; the result is nullopt), or their set and
// own part in `split` and, returned, the stamp the span gives its set: the later of `now` (the write's
// time, unix ns) and the span's start (a client's clock ahead: retention keeps a set by the starts of
// the stored spans).
std::optional<std::int64_t> BeginSharedRow(const Span& span, std::int64_t now, std::string& encoded,
                                           SharedAttributeSplitter& split);

class AttributeSetNumbers {
 public:
  enum class State {
    kFresh,     // numbered by this writer within half a lease of the stamp: use `id`
    kFirstMet,  // met for the first time: the span keeps the compact form
    kStale,     // numbered by this writer, but its stamp is too old: stamp it again
    kUnknown,   // met before but never numbered: number it
  };
  struct Lookup {
    State state = State::kUnknown;
    std::int64_t id = 0;  // for kFresh
  };

  // What the writer knows of `set` for a span stamped `stamp` (unix nanoseconds: the later of the
  // write's time and the span's start). A first meeting is remembered.
  Lookup Find(const std::string& set, std::int64_t stamp);
  // The store numbered or stamped `set`: its id and the stamp it now holds.
  void Remember(const std::string& set, std::int64_t id, std::int64_t stamp);
  // Forgets every id (a failed write that numbered some, or retention that removed any).
  void Forget() {
    last_ = nullptr;
    numbers_.clear();
  }

 private:
  struct Numbered {
    std::int64_t id = 0;
    std::int64_t leased = 0;  // the stamp this writer last gave it
  };
  std::unordered_map<std::string, Numbered> numbers_;
  std::pair<const std::string, Numbered>* last_ = nullptr;  // the entry the span before named
  std::unordered_set<std::size_t> met_once_;  // hashes of the sets met once (a collision numbers early)
};

}  // namespace sparktrace::tracing::store
