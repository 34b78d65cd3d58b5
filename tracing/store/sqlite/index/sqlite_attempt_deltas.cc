#include "tracing/store/sqlite/index/sqlite_attempt_deltas.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <optional>
#include <string>

#include "tracing/store/increment/attempt_delta.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/index/sqlite_index_reads.h"

namespace sparktrace::tracing::store {
namespace {

const std::string& ReadRowSql() {
  static const std::string sql = fmt::format(
      "SELECT start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, "
      "compute_ms, io_write_ms, idle_ms, indexed_at FROM task_attempts WHERE {}",
      kPartKeyMatchSql);
  return sql;
}

// indexed_at as AttemptRowUpsertSql moves it when a row's figures change: to now, or past its last
// value when the clock went back, so that a settled row is settled again.
const std::string& UpdateRowSql() {
  static const std::string sql = fmt::format(
      "UPDATE task_attempts SET start_unix_nano = ?8, end_unix_nano = ?9, span_count = ?10, error_count = "
      "?11, "
      "open_count = ?12, resource_wait_ms = ?13, compute_ms = ?14, io_write_ms = ?15, idle_ms = ?16, "
      "state = ?17, indexed_at = max(?18, indexed_at + 1) WHERE {}",
      kPartKeyMatchSql);
  return sql;
}

}  // namespace

Result<AttemptRowsLeft> AddToAttemptRows(SqliteConnection& db, const PartChanges& changes,
                                         std::int64_t indexed_unix_nano) {
  AttemptRowsLeft rest;
  if (changes.empty()) return rest;
  auto read = db.PrepareCached(ReadRowSql());
  if (!read.ok()) return read.error();
  auto update = db.PrepareCached(UpdateRowSql());
  if (!update.ok()) return update.error();
  SqliteStatement& select = **read;
  SqliteStatement& write = **update;
  for (const auto& [key, part_changes] : changes) {
    select.Reset();
    BindPartKey(select, 1, key);
    auto row = select.Step();
    if (!row.ok()) return row.error();
    if (!*row) {  // a new attempt: its row is the batch's parts, or added up from those stored
      if (auto created = task_index::RowOfNewParts(part_changes)) {
        rest.created.emplace_back(&key, *created);
      } else {
        rest.add_up.insert(key);
      }
      continue;
    }
    task_index::AttemptSums stored;
    stored.start_unix_nano = select.ColumnInt64(0);
    stored.end_unix_nano = select.ColumnInt64(1);
    stored.span_count = select.ColumnInt64(2);
    stored.error_count = select.ColumnInt64(3);
    stored.open_count = select.ColumnInt64(4);
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      stored.phase_ms[phase] = select.ColumnInt64(5 + static_cast<int>(phase));
    select.Reset();
    const std::optional<task_index::AttemptSums> next = task_index::AddPartChanges(stored, part_changes);
    if (!next) {
      rest.add_up.insert(key);
      continue;
    }
    if (*next == stored) continue;
    write.Reset();
    BindPartKey(write, 1, key);
    write.BindInt64(8, next->start_unix_nano);
    write.BindInt64(9, next->end_unix_nano);
    write.BindInt64(10, next->span_count);
    write.BindInt64(11, next->error_count);
    write.BindInt64(12, next->open_count);
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      write.BindInt64(13 + static_cast<int>(phase), next->phase_ms[phase]);
    write.BindText(17, AttemptState(next->open_count, next->error_count));
    write.BindInt64(18, indexed_unix_nano);
    if (auto ran = write.Run(); !ran.ok()) return ran.error();
  }
  select.Reset();
  write.Reset();
  return rest;
}

}  // namespace sparktrace::tracing::store
