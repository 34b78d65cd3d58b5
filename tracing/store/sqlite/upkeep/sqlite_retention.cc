#include "tracing/store/sqlite/upkeep/sqlite_retention.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_transaction.h"
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"
#include "tracing/store/sqlite/sqlite_task_index.h"

namespace sparktrace::tracing::store {

const std::string kSqliteTracesEndedBeforeSql = TracesEndedBeforeSql("?1");
const std::string kSqliteTracesEndedFirstSql = TracesEndedFirstSql("?1");

namespace {

struct Deleted {
  std::size_t traces = 0;
  std::size_t spans = 0;
};

// The ids (BLOBs, schema version 10) as the task index spells them: lower-case hex.
Result<std::vector<std::string>> SelectTraceIds(SqliteConnection& db, std::string_view selection,
                                                std::int64_t parameter) {
  auto stmt = db.Prepare(fmt::format("SELECT lower(hex(trace_id)) FROM ({})", selection));
  if (!stmt.ok()) return stmt.error();
  stmt->BindInt64(1, parameter);
  return stmt->CollectText();
}

Result<std::uint64_t> BytesInUse(SqliteConnection& db) {
  auto page_count = db.QueryInt64("PRAGMA page_count");
  if (!page_count.ok()) return page_count.error();
  auto free_pages = db.QueryInt64("PRAGMA freelist_count");
  if (!free_pages.ok()) return free_pages.error();
  auto page_size = db.QueryInt64("PRAGMA page_size");
  if (!page_size.ok()) return page_size.error();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, *page_count - *free_pages)) *
         static_cast<std::uint64_t>(*page_size);
}

// Deletes, in one transaction, the traces (summary and spans) whose ids `selection` (a SELECT of
// trace_id from traces, with one parameter ?1) returns.
Result<Deleted> DeleteTraces(SqliteConnection& db, std::string_view selection, std::int64_t parameter) {
  Deleted deleted;
  auto done = InWriteTransaction(db, [&]() -> Result<void> {
    auto doomed = SelectTraceIds(db, selection, parameter);
    if (!doomed.ok()) return doomed.error();
    if (auto forgotten = ForgetTracesInTaskIndex(db, *doomed); !forgotten.ok()) return forgotten.error();
    // Spans first: the selection reads the summary rows that the second statement deletes.
    for (const auto* table : {"spans", "traces"}) {
      auto stmt = db.Prepare(fmt::format("DELETE FROM {} WHERE trace_id IN ({})", table, selection));
      if (!stmt.ok()) return stmt.error();
      stmt->BindInt64(1, parameter);
      if (auto ran = stmt->Run(); !ran.ok()) return ran.error();
      const auto changes = static_cast<std::size_t>(sqlite3_changes64(db.handle()));
      (std::string_view(table) == "spans" ? deleted.spans : deleted.traces) = changes;
    }
    return {};
  });
  if (!done.ok()) return done.error();
  return deleted;
}

}  // namespace

Result<RetentionStats> EnforceSqliteRetention(SqliteConnection& db, SqliteAttributeSets& sets,
                                              const std::string& path, const StoreOptions& options,
                                              std::chrono::system_clock::time_point now) {
  const auto fail = [&path](const Error& error) {
    return Error{error.code, fmt::format("enforce retention on {}: {}", path, error.message)};
  };
  RetentionStats stats;
  auto before = BytesInUse(db);
  if (!before.ok()) return fail(before.error());
  stats.bytes_before = *before;

  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  const auto max_age_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options.max_age).count();
  if (now_ns > max_age_ns) {
    auto aged = DeleteTraces(db, kSqliteTracesEndedBeforeSql, now_ns - max_age_ns);
    if (!aged.ok()) return fail(aged.error());
    stats.traces_deleted_by_age = aged->traces;
    stats.spans_deleted += aged->spans;
  }

  // Pages freed by a delete are counted at once (freelist), so the loop sees its own progress.
  // Each round deletes about as many of the oldest traces as the excess would hold at the average
  // trace size; rows sharing pages with survivors free less than that, hence the loop.
  while (true) {
    auto used = BytesInUse(db);
    if (!used.ok()) return fail(used.error());
    if (*used <= options.max_bytes) break;
    auto traces = db.QueryInt64("SELECT count(*) FROM traces");
    if (!traces.ok()) return fail(traces.error());
    if (*traces == 0) break;  // what is left is the schema itself
    const std::uint64_t trace_count = static_cast<std::uint64_t>(*traces);
    const std::uint64_t average = std::max<std::uint64_t>(1, *used / trace_count);
    const std::uint64_t excess = *used - options.max_bytes;
    const std::uint64_t batch = std::clamp<std::uint64_t>((excess + average - 1) / average, 1, trace_count);
    auto oldest = DeleteTraces(db, kSqliteTracesEndedFirstSql, static_cast<std::int64_t>(batch));
    if (!oldest.ok()) return fail(oldest.error());
    if (oldest->traces == 0) break;
    stats.traces_deleted_by_size += oldest->traces;
    stats.spans_deleted += oldest->spans;
  }

  // The attribute sets no stored span can name any more (rows/sqlite_attribute_sets.h).
  std::size_t sets_removed = 0;
  auto removed = InWriteTransaction(db, [&]() -> Result<void> {
    auto unnamed = RemoveUnnamedAttributeSets(db, now_ns);
    if (!unnamed.ok()) return unnamed.error();
    sets_removed = *unnamed;
    return {};
  });
  if (!removed.ok()) return fail(removed.error());
  if (sets_removed > 0) sets.ForgetNumbers();

  // incremental_vacuum moves the free pages to the end and truncates them away (in the WAL); the
  // checkpoint then copies that into the database file, which is when the file itself shrinks, and
  // TRUNCATE empties the WAL too. A reader still holding an old snapshot makes the checkpoint partial;
  // that is not an error, the next call finishes it.
  if (auto vacuumed = db.Exec("PRAGMA incremental_vacuum"); !vacuumed.ok()) return fail(vacuumed.error());
  if (auto checkpointed = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); !checkpointed.ok()) {
    return fail(checkpointed.error());
  }
  auto page_count = db.QueryInt64("PRAGMA page_count");
  if (!page_count.ok()) return fail(page_count.error());
  auto page_size = db.QueryInt64("PRAGMA page_size");
  if (!page_size.ok()) return fail(page_size.error());
  stats.bytes_after = static_cast<std::uint64_t>(*page_count) * static_cast<std::uint64_t>(*page_size);
  return stats;
}

}  // namespace sparktrace::tracing::store
