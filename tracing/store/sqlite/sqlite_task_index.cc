#include "tracing/store/sqlite/sqlite_task_index.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>

#include "tracing/store/span_rows/span_table_sql.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/index/sqlite_attempt_deltas.h"
#include "tracing/store/sqlite/index/sqlite_index_reads.h"
#include "tracing/store/sqlite/index/sqlite_summary_attempts.h"
#include "tracing/store/sqlite/sqlite_span_rows.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/attempt_row_sql.h"
#include "tracing/store/task_index/index_columns.h"
#include "tracing/store/task_index/task_index.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {

namespace {

// The parts of a trace, its id as hex text in ?1 and as a BLOB in ?2 (a part's trace id is a BLOB since
// schema version 17, index/sqlite_index_schema.h; a part's trace key stays text): its Airflow parts
// through attempt_parts_by_trace, its part without identity (if any) by primary key (sqlite_schema.cc,
// kAirflowOnlyIndexesSchema).
constexpr std::string_view kPartsOfTraceSql = "airflow = 1 AND trace_id = ?2";
constexpr std::string_view kPartWithoutIdentitySql =
    "airflow = 0 AND dag_id = '' AND task_id = '' AND run_id = '' AND try_number = 0 AND map_index = -1 "
    "AND trace_key = ?1 AND trace_id = ?2";
// The attempt without identity of trace ?2 (its id as a BLOB), by task_attempts' primary key
// (sqlite_schema.cc, kPartsOnlyWithAppIdSchema and kBinaryIdsSchema).
constexpr std::string_view kAttemptWithoutIdentitySql =
    "airflow = 0 AND dag_id = '' AND task_id = '' AND run_id = '' AND try_number = 0 AND map_index = -1 "
    "AND trace_key = ?2";

// BindPartKey (index/sqlite_index_reads.h) for a task_attempts row: the trace key of an attempt without
// identity (its trace id) is a BLOB there since schema version 10 (sqlite_schema.cc, kBinaryIdsSchema);
// an Airflow attempt's is ''.
void BindAttemptKey(SqliteStatement& stmt, int first, const PartKey& key) {
  BindPartKey(stmt, first, key);
  if (!key.airflow) BindIdHex(stmt, first + 6, key.trace_key);
}

constexpr std::string_view kKeyColumns = "airflow, dag_id, task_id, run_id, try_number, map_index, trace_key";
// Inserts `rows` parts (NumberedValuesSql): row r's parameters start at 1 + r * kPartParameters.
constexpr int kPartParameters = 25;
std::string InsertPartsSql(int rows) {
  return fmt::format("INSERT INTO attempt_parts ({}) VALUES {}", kAttemptPartColumns,
                     NumberedValuesSql(rows, kPartParameters));
}
// Parts a statement inserts: an attempt of a call per trace writes a part a span, and a statement's own
// cost (its cursors on the table and its two indexes) was most of a single part's.
constexpr std::size_t kPartsPerInsert = 32;

Result<std::set<PartKey>> KeysOfTraces(SqliteConnection& db, const std::vector<std::string>& trace_ids) {
  // An attempt without identity is a task_attempts row or held by its summary (sqlite_summary_attempts.h);
  // an Airflow part is a row or held by its summary (index/sqlite_summary_attempts.h).
  static const std::string keys_sql = fmt::format(
      "SELECT {0} FROM attempt_parts WHERE {1} UNION ALL SELECT {0} FROM task_attempts WHERE {2} "
      "UNION ALL SELECT 0, '', '', '', 0, -1, trace_id FROM traces WHERE trace_id = ?2 AND attempt = 1 "
      "UNION ALL SELECT {0} FROM ({3})",
      kKeyColumns, kPartsOfTraceSql, kAttemptWithoutIdentitySql, HeldPartRowsSql("trace_id = ?2"));
  auto stmt = db.PrepareCached(keys_sql);
  if (!stmt.ok()) return stmt.error();
  SqliteStatement* select = *stmt;
  std::set<PartKey> keys;
  for (const std::string& trace_id : trace_ids) {
    select->Reset();
    select->BindText(1, trace_id);
    BindIdHex(*select, 2, trace_id);
    while (true) {
      auto row = select->Step();
      if (!row.ok()) return row.error();
      if (!*row) break;
      keys.insert(PartKey{select->ColumnInt64(0) != 0,
                          TaskAttemptKey{select->ColumnText(1), select->ColumnText(2), select->ColumnText(3),
                                         select->ColumnInt64(4), select->ColumnInt64(5)},
                          IdHexOfColumn(*select, 6)});
    }
  }
  select->Reset();  // a finished read still pins its snapshot until reset
  return keys;
}

Result<void> DeleteParts(SqliteConnection& db, const std::vector<std::string>& trace_ids) {
  static const std::string delete_airflow_sql =
      fmt::format("DELETE FROM attempt_parts WHERE {}", kPartsOfTraceSql);
  static const std::string delete_other_sql =
      fmt::format("DELETE FROM attempt_parts WHERE {}", kPartWithoutIdentitySql);
  // A part the summary holds goes with the rows (index/sqlite_summary_attempts.h).
  static const std::string release_held_sql =
      "UPDATE traces SET attempt = NULL, map_index = NULL WHERE trace_id = ?2 AND attempt = 2";
  for (const std::string* sql : {&delete_airflow_sql, &delete_other_sql, &release_held_sql}) {
    auto stmt = db.PrepareCached(*sql);
    if (!stmt.ok()) return stmt.error();
    SqliteStatement* remove = *stmt;
    for (const std::string& trace_id : trace_ids) {
      remove->Reset();
      remove->BindText(1, trace_id);
      BindIdHex(*remove, 2, trace_id);
      if (auto ran = remove->Run(); !ran.ok()) return ran.error();
    }
    remove->Reset();
  }
  return {};
}

// A part's sums (task_index.h, PartSums) from parameter `first` on, in the column order attempt_parts
// and task_attempts share.
void BindSums(SqliteStatement& stmt, int first, const task_index::PartSums& sums) {
  stmt.BindInt64(first, sums.start_unix_nano);
  stmt.BindInt64(first + 1, sums.end_unix_nano);
  stmt.BindInt64(first + 2, sums.span_count);
  stmt.BindInt64(first + 3, sums.error_count);
  stmt.BindInt64(first + 4, sums.open_count);
  for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase) {
    stmt.BindInt64(first + 5 + static_cast<int>(phase), sums.phase_ms[phase]);
  }
  stmt.BindInt64(first + 9, sums.finding_count);
  if (sums.top_finding) {
    stmt.BindText(first + 10, *sums.top_finding);
  } else {
    stmt.BindNull(first + 10);
  }
}

// RunManyRows through the connection's cached statements: `many_sql` of `rows_per_statement` rows of
// `parameters_per_row` parameters each, `one_sql` of one.
Result<void> RunManyRowsCached(
    SqliteConnection& db, const std::string& many_sql, const std::string& one_sql, std::size_t rows,
    std::size_t rows_per_statement, int parameters_per_row,
    const std::function<void(SqliteStatement&, std::size_t row, int first)>& bind) {
  if (rows == 0) return {};
  auto many = db.PrepareCached(many_sql);
  if (!many.ok()) return many.error();
  auto one = db.PrepareCached(one_sql);
  if (!one.ok()) return one.error();
  return RunManyRows(**many, **one, rows, rows_per_statement, parameters_per_row, bind);
}

// Inserts the parts of these traces but those of an attempt without identity that names no
// application, which its attempt row holds (sqlite_schema.cc, kPartsOnlyWithAppIdSchema), and a trace's
// only part its summary holds (index/sqlite_summary_attempts.h), many to a statement. `held`, for traces
// the transaction created: those whose summary holds their part already (no other can); null: the
// summaries of the traces whose one part may be held are asked to hold it.
Result<void> InsertParts(SqliteConnection& db, const PartsByTrace& parts_by_trace,
                         const std::set<std::string>* held) {
  // Bound without copies: the parts and their ids outlive each statement's run (RunManyRows).
  struct PartRow {
    std::optional<TraceId> trace_id;  // nullopt: not an id this store wrote (bound as its text)
    const std::string* trace_hex;
    const PartKey* key;
    const Part* part;
  };
  std::vector<PartRow> rows;
  for (const auto& [trace_id, parts] : parts_by_trace) {
    if (held != nullptr && held->contains(trace_id)) continue;
    const auto* holdable = held == nullptr ? task_index::PartASummaryMayHold(parts) : nullptr;
    if (holdable != nullptr) {
      auto holds = HoldPartInSummary(db, trace_id, holdable->first, holdable->second);
      if (!holds.ok()) return holds.error();
      if (*holds) continue;
    }
    for (const auto& [key, part] : parts) {
      if (key.airflow || !part.app_id.empty())
        rows.push_back({ParseTraceId(trace_id), &trace_id, &key, &part});
    }
  }
  static const std::string many_sql = InsertPartsSql(static_cast<int>(kPartsPerInsert));
  static const std::string one_sql = InsertPartsSql(1);
  return RunManyRowsCached(db, many_sql, one_sql, rows.size(), kPartsPerInsert, kPartParameters,
                           [&rows](SqliteStatement& stmt, std::size_t at, int first) {
                             const int base = first - 1;  // parameter n of the part is base + n
                             const PartRow& row = rows[at];
                             const Part& part = *row.part;
                             BindPartKeyUnowned(stmt, base + 1, *row.key);
                             if (row.trace_id) {
                               stmt.BindBlobUnowned(base + 8, IdBytes(*row.trace_id));
                             } else {
                               BindIdHex(stmt, base + 8, *row.trace_hex);
                             }
                             stmt.BindTextUnowned(base + 9, part.name);
                             if (part.app_id.empty()) {
                               stmt.BindNull(base + 10);
                             } else {
                               stmt.BindTextUnowned(base + 10, part.app_id);
                             }
                             BindSums(stmt, base + 11, task_index::SumsOf(part));
                             stmt.BindDouble(base + 22, part.top_impact);
                             stmt.BindInt64(base + 23, part.operations);
                             stmt.BindInt64(base + 24, part.failed_operations);
                             stmt.BindInt64(base + 25, part.failed_jobs);
                           });
}

// An attempt's row is the sum of its parts, rows and held ones (index/sqlite_summary_attempts.h, whose
// figures but the summary's are nothing: no finding among them); no parts left, no row. An upsert, not
// a delete and insert: the settled figures stay on the row (AttemptRowUpsertSql says how it is
// updated). Its traces are read from its parts (AttemptRowColumnsSql), not kept on it.
constexpr std::string_view kAggregateSelectSql = R"sql(
INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, trace_ids,
                           start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
                           compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, max(name), '', min(start_unix_nano),
       max(end_unix_nano), sum(span_count), sum(error_count), sum(open_count), sum(resource_wait_ms),
       sum(compute_ms), sum(io_write_ms), sum(idle_ms), sum(finding_count),
       (SELECT top_finding FROM attempt_parts p WHERE p.airflow = (?1 + 0) AND p.dag_id = ?2 AND p.task_id = ?3
          AND p.run_id = ?4 AND p.try_number = ?5 AND p.map_index = ?6 AND p.trace_key = ?7
          AND p.top_finding IS NOT NULL ORDER BY p.top_impact DESC LIMIT 1),
       CASE WHEN sum(open_count) > 0 THEN 'running' WHEN sum(error_count) > 0 THEN 'failed' ELSE 'success' END,
       ?8
FROM (SELECT name, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
             compute_ms, io_write_ms, idle_ms, finding_count
      FROM attempt_parts WHERE airflow = (?1 + 0) AND dag_id = ?2 AND task_id = ?3 AND run_id = ?4
        AND try_number = ?5 AND map_index = ?6 AND trace_key = ?7
      UNION ALL
      SELECT name, start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
             compute_ms, io_write_ms, idle_ms, finding_count FROM ({}))
HAVING count(*) > 0
)sql";

Result<void> Reaggregate(SqliteConnection& db, const std::set<PartKey>& keys, std::int64_t now) {
  if (keys.empty()) return {};
  static const std::string aggregate_sql =
      fmt::format(fmt::runtime(kAggregateSelectSql), HeldPartRowsSql(kHeldPartKeyMatchSql)) +
      AttemptRowUpsertSql("max");
  static const std::string remove_sql = fmt::format(
      "DELETE FROM task_attempts WHERE {0} AND NOT EXISTS (SELECT 1 FROM attempt_parts WHERE {0}) AND NOT "
      "EXISTS (SELECT 1 FROM traces WHERE attempt = 2 AND {1})",
      kPartKeyMatchSql, kHeldPartKeyMatchSql);
  auto prepared_upsert = db.PrepareCached(aggregate_sql);
  if (!prepared_upsert.ok()) return prepared_upsert.error();
  SqliteStatement* upsert = *prepared_upsert;
  auto prepared_remove = db.PrepareCached(remove_sql);
  if (!prepared_remove.ok()) return prepared_remove.error();
  SqliteStatement* remove = *prepared_remove;
  for (const PartKey& key : keys) {
    upsert->Reset();
    BindPartKey(*upsert, 1, key);
    upsert->BindInt64(8, now);
    if (auto ran = upsert->Run(); !ran.ok()) return ran.error();
    remove->Reset();
    BindPartKey(*remove, 1, key);
    if (auto ran = remove->Run(); !ran.ok()) return ran.error();
  }
  upsert->Reset();
  remove->Reset();
  return {};
}

// New attempts without identity a statement writes (InsertWholeAttempts, InsertAttemptsSql): a call per
// trace makes one per span, and a statement's own cost is then paid once for this many.
constexpr std::size_t kAttemptsPerInsert = 32;

// The task index's SQL on one SQLite connection (task_index_dialect.h): statements prepared once per
// connection (SqliteConnection::PrepareCached; parsing them for every batch cost as much as running
// them) and run once per trace or row.
class SqliteTaskIndex final : public TaskIndexDialect {
 public:
  explicit SqliteTaskIndex(SqliteConnection& db) : db_(db) {}
  // For traces the transaction created: their summaries in `held_parts` hold their one part, and no
  // other summary can (the writer asked when it wrote them, sqlite_span_store.cc).
  SqliteTaskIndex(SqliteConnection& db, const std::set<std::string>& held_parts)
      : db_(db), held_parts_(&held_parts) {}

  Result<std::set<PartKey>> KeysOfTraces(const std::vector<std::string>& trace_ids) override {
    return store::KeysOfTraces(db_, trace_ids);
  }
  Result<void> DeleteParts(const std::vector<std::string>& trace_ids) override {
    return store::DeleteParts(db_, trace_ids);
  }
  Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(
      const std::vector<std::string>& trace_ids) override {
    static const std::string spans_for_index_sql = SpansForIndexSql();
    auto read = db_.PrepareCached(spans_for_index_sql);
    if (!read.ok()) return read.error();
    std::map<std::string, std::vector<IndexSpan>> by_trace;
    for (const std::string& trace_id : trace_ids) {
      auto spans = ReadIndexSpans(*read, trace_id);
      if (!spans.ok()) return spans.error();
      if (!spans->empty()) by_trace.emplace(trace_id, std::move(spans).value());
    }
    (*read)->Reset();  // a finished read still pins its snapshot until reset
    return by_trace;
  }
  Result<std::map<std::string, task_index::StoredTraceIndex>> ReadTraceIndexes(
      const std::vector<std::string>& trace_ids) override {
    return ReadStoredTraceIndexes(db_, trace_ids);
  }
  Result<std::optional<IndexSpan>> ReadSpan(const std::string& trace_id,
                                            const std::string& span_id) override {
    auto version = ReadStoredVersion(db_, trace_id, span_id);
    if (!version.ok()) return version.error();
    if (!*version) return std::optional<IndexSpan>();
    return std::optional<IndexSpan>(std::move((*version)->index));
  }
  Result<void> WriteAwaitedParents(
      const std::map<std::string, std::optional<std::string>>& awaited_by_trace) override {
    return store::WriteAwaitedParents(db_, awaited_by_trace);
  }
  Result<void> InsertParts(const PartsByTrace& parts_by_trace) override {
    if (auto inserted = store::InsertParts(db_, parts_by_trace, held_parts_); !inserted.ok())
      return inserted.error();
    // A part without identity is its attempt's row (AddUp writes it from here).
    for (const auto& [trace_id, parts] : parts_by_trace) {
      for (const auto& [key, part] : parts) {
        if (!key.airflow) parts_without_identity_.insert_or_assign(key, part);
      }
    }
    return {};
  }
  Result<void> InsertWholeAttempts(const std::vector<WholeAttemptPart>& attempts, std::int64_t now) override {
    return InsertAttemptRows(attempts.size(), [&](SqliteStatement& row, std::size_t at, int first) {
      const WholeAttemptPart& attempt = attempts[at];
      BindAttemptRow(row, first, *attempt.key, attempt.part->name, task_index::SumsOf(*attempt.part),
                     task_index::HasAnythingToSettle(*attempt.key, *attempt.part), now);
    });
  }
  Result<void> AddUpChanges(const PartChanges& changes, std::int64_t now) override {
    // An attempt without identity is its part's row (AddUp writes it); an Airflow one adds the changes.
    ChangesByIdentity split = SplitByIdentity(changes);
    auto rest = AddToAttemptRows(db_, split.airflow, now);
    if (!rest.ok()) return rest.error();
    const auto& created = rest->created;
    auto inserted = InsertAttemptRows(created.size(), [&](SqliteStatement& row, std::size_t at, int first) {
      // An Airflow attempt always has its task's history to settle (task_index.h, HasAnythingToSettle).
      BindAttemptRow(row, first, *created[at].first, created[at].second.name, created[at].second.sums, true,
                     now);
    });
    if (!inserted.ok()) return inserted.error();
    rest->add_up.insert(split.without_identity.begin(), split.without_identity.end());
    return AddUp(rest->add_up, now);
  }
  Result<void> AddUp(const std::set<PartKey>& keys, std::int64_t now) override {
    std::set<PartKey> airflow_keys;
    std::vector<const PartKey*> other_keys;
    for (const PartKey& key : keys) {
      if (key.airflow) {
        airflow_keys.insert(key);
      } else {
        other_keys.push_back(&key);
      }
    }
    if (auto added = Reaggregate(db_, airflow_keys, now); !added.ok()) return added.error();
    return WriteAttemptsWithoutIdentity(other_keys, now);
  }

 private:
  // Inserts `count` attempt rows that do not exist yet, kAttemptsPerInsert to a statement where there
  // are as many (RunManyRows); `bind` binds row `at`'s parameters from parameter `first` on (BindAttemptRow).
  Result<void> InsertAttemptRows(
      std::size_t count, const std::function<void(SqliteStatement&, std::size_t at, int first)>& bind) {
    static const std::string chunk_sql = InsertAttemptsSql(static_cast<int>(kAttemptsPerInsert));
    static const std::string single_sql = InsertAttemptsSql(1);
    return RunManyRowsCached(db_, chunk_sql, single_sql, count, kAttemptsPerInsert, kAttemptRowParameters,
                             bind);
  }

  // One row of InsertAttemptsSql (or its upsert) from parameter `first` on.
  static void BindAttemptRow(SqliteStatement& row, int first, const PartKey& key, std::string_view name,
                             const task_index::PartSums& sums, bool settles, std::int64_t now) {
    const int at = first - 1;  // parameter n of the row is at + n
    BindAttemptKey(row, at + 1, key);
    row.BindText(at + 8, name);
    row.BindText(at + 9, "");  // its traces are its parts' or its trace key (AttemptRowColumnsSql)
    BindSums(row, at + 10, sums);
    row.BindText(at + 21, AttemptState(sums.open_count, sums.error_count));
    row.BindInt64(at + 22, now);
    row.BindInt64(at + 23, settles ? 1 : 0);
  }

  // An attempt without identity after a refresh: its row from the part just computed (the settled
  // figures stay, AttemptRowUpsertSql), or no row when its trace has no such part any more.
  Result<void> WriteAttemptsWithoutIdentity(const std::vector<const PartKey*>& keys, std::int64_t now) {
    if (keys.empty()) return {};
    static const std::string upsert_sql = InsertAttemptsSql(1) + AttemptRowUpsertSql("max");
    static const std::string remove_sql = fmt::format("DELETE FROM task_attempts WHERE {}", kPartKeyMatchSql);
    auto upsert = db_.PrepareCached(upsert_sql);
    if (!upsert.ok()) return upsert.error();
    auto remove = db_.PrepareCached(remove_sql);
    if (!remove.ok()) return remove.error();
    for (const PartKey* key : keys) {
      const auto part = parts_without_identity_.find(*key);
      bool held = false;
      if (part != parts_without_identity_.end()) {
        auto holds = HoldInSummary(db_, *key, part->second);
        if (!holds.ok()) return holds.error();
        held = *holds;
      }
      if (part != parts_without_identity_.end() && !held) {
        (*upsert)->Reset();
        BindAttemptRow(**upsert, 1, *key, part->second.name, task_index::SumsOf(part->second),
                       task_index::HasAnythingToSettle(*key, part->second), now);
        if (auto ran = (*upsert)->Run(); !ran.ok()) return ran.error();
      } else {  // held by its summary, or no such attempt any more: no row
        (*remove)->Reset();
        BindAttemptKey(**remove, 1, *key);
        if (auto ran = (*remove)->Run(); !ran.ok()) return ran.error();
      }
      if (held) continue;
      if (auto released = ReleaseFromSummary(db_, key->trace_key); !released.ok()) return released.error();
    }
    (*upsert)->Reset();
    (*remove)->Reset();
    return {};
  }

  SqliteConnection& db_;
  // The new traces whose summary holds their part (IndexNewTraces); null for stored traces.
  const std::set<std::string>* held_parts_ = nullptr;
  // The parts without identity InsertParts saw, for AddUp (this object lives for one index update).
  std::map<PartKey, Part> parts_without_identity_;
};

}  // namespace

Result<void> RefreshTaskIndex(SqliteConnection& db, const std::vector<std::string>& trace_ids) {
  SqliteTaskIndex dialect(db);
  return task_index::Refresh(dialect, trace_ids);
}

Result<void> IndexNewTraces(SqliteConnection& db, const PartsByTrace& parts_by_trace,
                            const std::set<std::string>& held_parts) {
  SqliteTaskIndex dialect(db, held_parts);
  return task_index::AddNewTraceParts(dialect, parts_by_trace);
}

Result<void> UpdateTaskIndex(SqliteConnection& db, const task_index::BatchOfTraces& batch) {
  SqliteTaskIndex dialect(db);
  return task_index::Update(dialect, batch);
}

Result<void> ForgetTracesInTaskIndex(SqliteConnection& db, const std::vector<std::string>& trace_ids) {
  SqliteTaskIndex dialect(db);
  return task_index::Forget(dialect, trace_ids);
}

Result<std::vector<std::string>> TracesMatching(SqliteConnection& db, std::string_view text) {
  auto stmt = db.Prepare(
      "SELECT lower(hex(trace_id)) FROM traces WHERE trace_id = sparktrace_unhex(lower(?1)) "
      "UNION SELECT lower(hex(trace_id)) FROM spans WHERE operation_id = ?1 "
      "UNION SELECT lower(hex(trace_id)) FROM attempt_parts WHERE app_id = ?1 LIMIT 200");
  if (!stmt.ok()) return stmt.error();
  stmt->BindText(1, text);
  return stmt->CollectText();
}

}  // namespace sparktrace::tracing::store
