#pragma once
// ExecutorPool: the simulated application's executors over (virtual) time: when each was asked
// for, added and removed, and why. The planner schedules task attempts on the executors alive
// at a time; the renderer writes ExecutorAdded/ExecutorRemoved from the same records.
//
// Threads: a plain value; not synchronised.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sim/eventlog/operation_plan.h"

namespace sparktrace::sim::eventlog {

struct ExecutorRecord {
  std::string id;  // "1", "2", ... as Spark numbers executors
  std::string host;
  int cores = 4;
  EpochMillis request_ms = 0;
  EpochMillis added_ms = 0;
  std::optional<EpochMillis> removed_ms;
  std::string removed_reason;
};

class ExecutorPool {
 public:
  // Adds an executor (the next id, on a host of its own); returns its index.
  int Add(int cores, EpochMillis request_ms, EpochMillis added_ms);
  void Remove(int index, EpochMillis removed_ms, std::string reason);

  const ExecutorRecord& at(int index) const { return executors_.at(static_cast<std::size_t>(index)); }
  int size() const { return static_cast<int>(executors_.size()); }
  // Executors not removed at `time_ms` (including those still to be added after it).
  std::vector<int> NotRemovedAt(EpochMillis time_ms) const;

 private:
  std::vector<ExecutorRecord> executors_;
};

inline constexpr EpochMillis kNever = std::numeric_limits<EpochMillis>::max();

}  // namespace sparktrace::sim::eventlog
