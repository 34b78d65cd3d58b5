#pragma once
// Which task attempt a stored span belongs to: the nearest span at or above it that carries an
// Airflow identity (the proxy's RPC and operation spans do; the driver's spans below them do not).
// One walk for the store's task index (tracing/task_index.cc) and the trace view's selection of an
// attempt's spans (traceview/attempt_spans.cc), so that the list and the page always agree.
//
// Pure function; thread-safe.

#include <cstddef>
#include <optional>
#include <vector>

namespace sparktrace::tracing {

// For each of `count` spans, the index of its nearest ancestor-or-self for which `is_owner(index)`
// holds, following `parent_of(index)` (nullopt at a root or a parent not among them); nullopt when
// there is none. Each span is walked once (later walks stop at a decided span), and a walk stops
// after `count` steps, so that a corrupt parent cycle cannot loop.
template <typename ParentOf, typename IsOwner>
std::vector<std::optional<std::size_t>> NearestOwners(std::size_t count, ParentOf parent_of,
                                                      IsOwner is_owner) {
  std::vector<std::optional<std::size_t>> owner(count);
  std::vector<bool> decided(count, false);
  std::vector<std::size_t> path;
  for (std::size_t start = 0; start < count; ++start) {
    path.clear();
    std::optional<std::size_t> current = start;
    std::optional<std::size_t> found;
    for (std::size_t steps = 0; current && steps <= count; ++steps) {
      if (decided[*current]) {
        found = owner[*current];
        break;
      }
      path.push_back(*current);
      if (is_owner(*current)) {
        found = *current;
        break;
      }
      current = parent_of(*current);
    }
    for (std::size_t member : path) {
      owner[member] = found;
      decided[member] = true;
    }
  }
  return owner;
}

}  // namespace sparktrace::tracing
