#pragma once
// What a store backend does for the task index: its SQL, and nothing of the index's logic
// (task_index.h holds that, once for both backends). Each backend implements this over its own
// connection (sqlite/sqlite_task_index.cc, postgres/postgres_task_index.cc); the two differ in how
// they spell and execute statements (prepared statements per row against arrays, unnest and COPY),
// in PostgreSQL's advisory locks, never in what a part or a row holds.
//
// Threads: the caller's, inside its write transaction.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/store/increment/attempt_delta.h"
#include "tracing/store/increment/part_increment.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

// The parts of several traces: trace id (hex) -> its parts.
using PartsByTrace = std::map<std::string, std::map<PartKey, Part>>;

// What a batch did to the parts of Airflow attempts, by attempt.
using PartChanges = std::map<PartKey, std::vector<task_index::PartChange>>;

// `changes` split by the kind of attempt: Airflow attempts, whose rows add up parts from many traces,
// and the keys of attempts without identity, each one part's row (both dialects' AddUpChanges).
struct ChangesByIdentity {
  PartChanges airflow;
  std::set<PartKey> without_identity;
};
ChangesByIdentity SplitByIdentity(const PartChanges& changes);

// A part whose attempt has no other part (a trace without Airflow identity): its row is the part.
struct WholeAttemptPart {
  const PartKey* key = nullptr;
  const std::string* trace_id = nullptr;
  const Part* part = nullptr;
};

class TaskIndexDialect {
 public:
  virtual ~TaskIndexDialect() = default;

  // The keys of every part these traces have in attempt_parts.
  virtual Result<std::set<PartKey>> KeysOfTraces(const std::vector<std::string>& trace_ids) = 0;
  // Deletes the parts of these traces.
  virtual Result<void> DeleteParts(const std::vector<std::string>& trace_ids) = 0;
  // The stored spans of these traces as the index reads them (span_rows/span_table_sql.h's
  // IndexSpanColumnsSql), by trace; a trace with no spans is absent.
  virtual Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(
      const std::vector<std::string>& trace_ids) = 0;
  // Inserts these parts into attempt_parts (PartSums says what each column holds).
  virtual Result<void> InsertParts(const PartsByTrace& parts) = 0;
  // Inserts the rows of attempts that are new and have only this part, as AddUp would add them up.
  virtual Result<void> InsertWholeAttempts(const std::vector<WholeAttemptPart>& attempts,
                                           std::int64_t indexed_unix_nano) = 0;
  // Each attempt's row is the sum of its parts, upserted with AttemptRowUpsertSql (the settled
  // figures stay); an attempt with no parts left loses its row.
  virtual Result<void> AddUp(const std::set<PartKey>& keys, std::int64_t indexed_unix_nano) = 0;
  // The same for attempts whose parts changed as `changes` says (the parts already written): a backend
  // may add the changes to the rows (increment/attempt_delta.h) instead of adding up every part again.
  virtual Result<void> AddUpChanges(const PartChanges& changes, std::int64_t indexed_unix_nano) {
    std::set<PartKey> keys;
    for (const auto& [key, part_changes] : changes) keys.insert(key);
    return AddUp(keys, indexed_unix_nano);
  }

  // For updating the index from a batch without re-reading its traces (part_increment.h). A backend
  // that keeps no more than the sums answers with nothing, and its traces are recomputed.
  //
  // What the index keeps of these traces (absent: nothing known; recomputed).
  virtual Result<std::map<std::string, task_index::StoredTraceIndex>> ReadTraceIndexes(
      const std::vector<std::string>& /*trace_ids*/) {
    return std::map<std::string, task_index::StoredTraceIndex>();
  }
  // One stored span of a trace, as ReadSpans reads it; nullopt when not stored.
  virtual Result<std::optional<IndexSpan>> ReadSpan(const std::string& /*trace_id*/,
                                                    const std::string& /*span_id*/) {
    return std::optional<IndexSpan>();
  }
  // Records the parents each trace's spans wait for (task_index::AwaitedParentsText: nullopt is NULL).
  virtual Result<void> WriteAwaitedParents(
      const std::map<std::string, std::optional<std::string>>& /*awaited_by_trace*/) {
    return {};
  }
};

}  // namespace sparktrace::tracing::store
