#pragma once
// The summary rows of the traces a batch may create, written many to a statement. A summary goes in
// only for a trace that has no row yet; which ones went in is what tells the writer a new trace (the
// batch then indexes it from its own spans) from one with stored spans (updated from both).
//
// One statement per summary (INSERT … ON CONFLICT DO NOTHING, sqlite3_changes telling) cost a
// call per trace more than its span's row: a statement's own work (binding, opening and closing its
// cursors, its end) for a row of ~100 bytes. Here one lookup asks which of up to kSummariesPerStatement
// traces have a row, and one plain INSERT writes the rest together, as the span upsert does
// (sqlite_span_rows.h, NumberedValuesSql). Both run in the batch's write transaction, so no other
// writer can add a row between them.
//
// Threads: the connection's (one store object, one thread at a time).

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

class SqliteConnection;
class SqliteStatement;

// One trace's summary as the batch computed it; the views and pointers must outlive Insert().
struct NewSummary {
  std::string_view trace_id;  // the id's 16 bytes, as spans and traces key it (schema version 10)
  TraceSummaryRow row;
  const std::optional<std::string>* awaited_parents = nullptr;  // nullopt: unknown
  bool holds_attempt = false;  // index/sqlite_summary_attempts.h
  // Set when it holds its trace's one part, an Airflow attempt's, whose map index this is
  // (index/sqlite_summary_attempts.h); never with holds_attempt.
  std::optional<std::int64_t> held_part_map_index;
};

class SqliteNewSummaries {
 public:
  // Summaries a statement looks up and inserts: 32 × 13 parameters, well inside SQLite's limit.
  static constexpr std::size_t kSummariesPerStatement = 32;

  // Prepares the lookup and the inserts on the writer's connection.
  static Result<SqliteNewSummaries> Prepare(SqliteConnection& db);

  SqliteNewSummaries(SqliteNewSummaries&&) noexcept;
  SqliteNewSummaries& operator=(SqliteNewSummaries&&) noexcept;
  ~SqliteNewSummaries();

  // Inserts each summary whose trace has no row, in two steps, so that the caller can decide more of a
  // new trace's summary once it knows it is new: MarkStored clears is_new[i] (all true on the way in)
  // where summaries[i]'s trace has a row, InsertNew inserts the others. Ids must be distinct (a
  // batch's traces are).
  Result<void> MarkStored(std::span<const NewSummary> summaries, std::vector<bool>& is_new);
  Result<void> InsertNew(std::span<const NewSummary> summaries, const std::vector<bool>& is_new);

 private:
  SqliteNewSummaries(std::unique_ptr<SqliteStatement> lookup, std::unique_ptr<SqliteStatement> insert_many,
                     std::unique_ptr<SqliteStatement> insert_one);

  std::unique_ptr<SqliteStatement> lookup_;       // which of kSummariesPerStatement ids have a row
  std::unique_ptr<SqliteStatement> insert_many_;  // kSummariesPerStatement summaries
  std::unique_ptr<SqliteStatement> insert_one_;   // the rest, one at a time
};

}  // namespace sparktrace::tracing::store
