#pragma once
// An Airflow attempt's row (the sum of its parts, one per trace) after some of its parts changed,
// from the row as stored and the changes alone: without it every batch re-added every part of the
// attempt, and an attempt made of a trace per call (49,000 Config calls without a traceparent) slowed
// its store down as it grew (bench/store_bench.cc, --traces-per-attempt). Nothing when only a
// re-addition can tell (a part with findings, whose top finding is a maximum over all parts, or one
// whose bounds move inwards where they were the attempt's).
//
// Pure: no I/O, no threads.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store::task_index {

// The figures of an attempt's row that its parts add up to (task_index.h's PartSums order). Its traces
// are not among them: a listing reads them from the parts (SQLite schema 12, PostgreSQL schema 6), so
// that a batch adding a few traces to an attempt of 50,000 does not rewrite the list of all of them.
struct AttemptSums {
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;
  std::int64_t open_count = 0;
  std::array<std::int64_t, kSparkPhaseCount> phase_ms{};
  bool operator==(const AttemptSums&) const = default;
};

// One part of an attempt that a batch created (no `before`) or changed.
struct PartChange {
  std::string trace_id;
  std::optional<Part> before;
  Part after;
};

std::optional<AttemptSums> AddPartChanges(AttemptSums sums, const std::vector<PartChange>& changes);

}  // namespace sparktrace::tracing::store::task_index
