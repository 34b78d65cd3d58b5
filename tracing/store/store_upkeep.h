#pragma once
// StoreUpkeep: the store's settling and retention role. The trace view's settler settles attempts
// (task_attempts.h, SettledFigures: figures the store keeps but never computes); the store exporter
// enforces retention between batches.

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "common/result.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

struct RetentionStats {
  std::size_t traces_deleted_by_age = 0;
  std::size_t traces_deleted_by_size = 0;
  std::size_t spans_deleted = 0;
  std::uint64_t bytes_before = 0;  // bytes in use before, as compared with max_bytes
  std::uint64_t bytes_after = 0;   // bytes in use after
};

class StoreUpkeep {
 public:
  virtual ~StoreUpkeep() = default;

  // Settling (task_attempts.h, SettledFigures). Attempts due for it: not running, with no settled
  // figures of their current version, and no change indexed after `now - quiet`; the longest quiet
  // first, at most `limit`. Readers may list; the backlog counts all such rows, quiet or not.
  virtual Result<DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point now,
                                              std::chrono::milliseconds quiet, std::size_t limit) = 0;
  // Records the figures of version `indexed_unix_nano` of the attempt's row, only if the row still is
  // at that version and no one recorded figures of it yet (a conditional update: of several settlers
  // sharing a store, exactly one claims each version). Writers only.
  virtual Result<SettleClaim> RecordSettlement(const AttemptRef& ref, std::uint64_t indexed_unix_nano,
                                               const SettledFigures& figures) = 0;

  // Deletes whole traces that ended before `now - max_age`, then the oldest while the store holds
  // more than max_bytes (StoreOptions), in short transactions (never one long lock). Writers only;
  // the store exporter calls it periodically between batches.
  virtual Result<RetentionStats> EnforceRetention(std::chrono::system_clock::time_point now) = 0;
};

}  // namespace sparktrace::tracing::store
