#include "tracing/store/postgres/postgres_task_index.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <variant>

#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/index/postgres_attempt_deltas.h"
#include "tracing/store/postgres/index/postgres_attempt_keys.h"
#include "tracing/store/postgres/index/postgres_index_reads.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/stored_span.h"
#include "tracing/store/task_index/attempt_parts.h"
#include "tracing/store/task_index/attempt_row_sql.h"
#include "tracing/store/task_index/index_columns.h"
#include "tracing/store/task_index/task_index.h"
#include "tracing/store/task_index/task_index_dialect.h"

namespace sparktrace::tracing::store {
namespace {

// The stored spans of these traces as the index takes a span being written (IndexSpanOf).
Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(PgConnection& db,
                                                                const std::vector<std::string>& trace_ids) {
  static const std::string spans_for_index_sql =
      fmt::format("SELECT {} FROM spans WHERE trace_id = ANY({}) ORDER BY trace_id",
                  PostgresIndexSpanColumnsSql(), IdsFromHexSql("$1"));
  auto result = db.Query(spans_for_index_sql, {TextArray(trace_ids)});
  if (!result.ok()) return result.error();
  std::map<std::string, std::vector<IndexSpan>> by_trace;
  for (int row = 0; row < result->rows(); ++row) {
    auto span = PostgresIndexSpanFrom(*result, row);
    if (!span.ok()) return span.error();
    by_trace[std::string(result->Text(row, 0))].push_back(std::move(span).value());
  }
  return by_trace;
}

// A trace without Airflow identity has one part, keyed (0, '', '', '', 0, -1, trace id) with that trace
// id (PartsOfTrace), kept in attempt_parts only when it names an application (the search by app id
// reads attempt_parts): otherwise its attempt's row in task_attempts is all there is
// (postgres_schema.cc, version 3), found by that table's primary key.
constexpr std::string_view kWithoutIdentityKey =
    "airflow = 0 AND dag_id = '' AND task_id = '' AND run_id = '' AND try_number = 0 AND map_index = -1";

Result<std::set<PartKey>> KeysOfTraces(PgConnection& db, const std::vector<std::string>& trace_ids) {
  static const std::string keys_sql = fmt::format(
      "SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key FROM attempt_parts "
      "WHERE airflow = 1 AND trace_id = ANY({2}) "
      "UNION SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key FROM task_attempts "
      "WHERE {0} AND trace_key = ANY($1::text[]) "
      // or held by its summary (task_index.h, SummaryHoldsAttempt)
      "UNION SELECT 0, '', '', '', 0, -1, {1} COLLATE \"C\" FROM traces WHERE trace_id = ANY({2}) AND "
      "attempt "
      // or an Airflow part held by its summary (held/postgres_held_parts.h)
      "UNION SELECT airflow, dag_id, task_id, run_id, try_number, map_index, trace_key FROM ({3}) h",
      kWithoutIdentityKey, TraceHexSql("trace_id"), IdsFromHexSql("$1"),
      PostgresHeldPartRowsSql(fmt::format("trace_id = ANY({})", IdsFromHexSql("$1"))));
  auto result = db.Query(keys_sql, {TextArray(trace_ids)});
  if (!result.ok()) return result.error();
  std::set<PartKey> keys;
  for (int row = 0; row < result->rows(); ++row) {
    keys.insert(PartKey{
        result->Int64(row, 0) != 0,
        TaskAttemptKey{std::string(result->Text(row, 1)), std::string(result->Text(row, 2)),
                       std::string(result->Text(row, 3)), result->Int64(row, 4), result->Int64(row, 5)},
        std::string(result->Text(row, 6))});
  }
  return keys;
}

// A part the summary holds goes with the rows (held/postgres_held_parts.h).
Result<void> DeleteParts(PgConnection& db, const std::vector<std::string>& trace_ids) {
  static const std::string delete_sql = fmt::format(
      "WITH released AS (UPDATE traces SET held_map_index = NULL WHERE trace_id = ANY({1}) "
      "AND held_map_index IS NOT NULL) "
      "DELETE FROM attempt_parts WHERE (airflow = 1 AND trace_id = ANY({1})) "
      "OR ({0} AND trace_key = ANY($1::text[]) AND {2} = trace_key)",
      kWithoutIdentityKey, IdsFromHexSql("$1"), TraceHexSql("trace_id"));
  auto deleted = db.Query(delete_sql, {TextArray(trace_ids)});
  if (!deleted.ok()) return deleted.error();
  return {};
}

// A part's key, in the column order of attempt_parts and task_attempts (as kKeysCte's arrays).
void CopyKey(CopyRows& copy, const PartKey& key) {
  copy.Int(key.airflow ? 1 : 0);
  copy.Text(key.attempt.dag_id);
  copy.Text(key.attempt.task_id);
  copy.Text(key.attempt.run_id);
  copy.Int(key.attempt.try_number);
  copy.Int(key.attempt.map_index);
  copy.Text(key.trace_key);
}

// A part's sums (task_index.h, PartSums), in the column order attempt_parts and task_attempts share.
void CopySums(CopyRows& copy, const task_index::PartSums& sums) {
  copy.Int(sums.start_unix_nano);
  copy.Int(sums.end_unix_nano);
  copy.Int(sums.span_count);
  copy.Int(sums.error_count);
  copy.Int(sums.open_count);
  for (const std::int64_t ms : sums.phase_ms) copy.Int(ms);
  copy.Int(sums.finding_count);
  if (sums.top_finding) {
    copy.Text(*sums.top_finding);
  } else {
    copy.Null();
  }
}

// Inserts the parts of these traces but those of an attempt without identity that names no application,
// which its attempt row holds (kWithoutIdentityKey), and a trace's only part its summary holds
// (held/postgres_held_parts.h). `held`, for traces the transaction created: those whose summary holds
// their part already (no other can); null: the summaries of the traces whose one part may be held are
// asked to hold it, in one statement.
Result<void> InsertParts(PgConnection& db, const PartsByTrace& parts_by_trace,
                         const std::set<std::string>* held) {
  std::vector<PartToHold> to_hold;
  if (held == nullptr) {
    for (const auto& [trace_id, parts] : parts_by_trace) {
      if (const auto* part = task_index::PartASummaryMayHold(parts); part != nullptr)
        to_hold.push_back({&trace_id, &part->first, &part->second});
    }
  }
  auto held_now = HoldPostgresParts(db, to_hold);
  if (!held_now.ok()) return held_now.error();
  const std::set<std::string>& holding = held != nullptr ? *held : *held_now;
  std::string rows;
  CopyRows copy(rows);
  for (const auto& [trace_id, parts] : parts_by_trace) {
    if (holding.contains(trace_id)) continue;
    for (const auto& [key, part] : parts) {
      if (!key.airflow && part.app_id.empty()) continue;  // its attempt's row holds it (kWithoutIdentityKey)
      CopyKey(copy, key);
      copy.Text(trace_id);
      copy.Text(part.name);
      if (part.app_id.empty()) {
        copy.Null();
      } else {
        copy.Text(part.app_id);
      }
      CopySums(copy, task_index::SumsOf(part));
      copy.Text(fmt::format("{}", part.top_impact));
      copy.Int(part.operations);
      copy.Int(part.failed_operations);
      copy.Int(part.failed_jobs);
      copy.End();
    }
  }
  if (rows.empty()) return {};
  static const std::string copy_sql = fmt::format("COPY attempt_parts ({}) FROM STDIN", kAttemptPartColumns);
  return db.CopyIn(copy_sql, rows);
}

// The columns of an attempt's row made of one part, in CopyWholeAttempt's order.
constexpr std::string_view kWholeAttemptColumns =
    "airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, trace_ids, start_unix_nano, "
    "end_unix_nano, span_count, error_count, open_count, resource_wait_ms, compute_ms, io_write_ms, idle_ms, "
    "finding_count, top_finding, state, indexed_at, settles";

// The row of an attempt made of one part (a trace without identity: its trace key is its trace id),
// as Reaggregate would add it up.
void CopyWholeAttempt(CopyRows& copy, const PartKey& key, const Part& part, std::int64_t now) {
  CopyKey(copy, key);
  copy.Text(part.name);
  copy.Text("");  // trace_ids: its trace key is its one trace (AttemptRowReadColumns)
  CopySums(copy, task_index::SumsOf(part));
  copy.Text(AttemptState(part.open, part.Errors()));
  copy.Int(now);
  copy.Int(task_index::HasAnythingToSettle(key, part) ? 1 : 0);
  copy.End();
}

// An attempt's row is the sum of its parts, rows and held ones (held/postgres_held_parts.h, whose figures
// but the summary's are nothing: no finding among them); no parts left, no row. The attempts' advisory locks
// come first, in lock-id order (see the header), unless the caller holds them already. The upsert
// keeps the settled figures (AttemptRowUpsertSql says how the row is updated).
Result<void> Reaggregate(PgConnection& db, const std::set<PartKey>& keys, std::int64_t now,
                         bool locked_already = false) {
  if (keys.empty()) return {};
  if (!locked_already) {
    if (auto locked = LockAttempts(db, keys); !locked.ok()) return locked.error();
  }

  const KeyArrays arrays(keys);
  std::vector<PgParam> upsert_params = arrays.Params();
  upsert_params.emplace_back(std::to_string(now));
  auto upserted =
      db.Query(fmt::format(R"sql({0}
INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, trace_key, name, trace_ids,
                           start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms,
                           compute_ms, io_write_ms, idle_ms, finding_count, top_finding, state, indexed_at)
SELECT k.airflow, k.dag_id, k.task_id, k.run_id, k.try_number, k.map_index, k.trace_key, max(p.name),
       '', min(p.start_unix_nano), max(p.end_unix_nano),
       sum(p.span_count), sum(p.error_count), sum(p.open_count), sum(p.resource_wait_ms), sum(p.compute_ms),
       sum(p.io_write_ms), sum(p.idle_ms), sum(p.finding_count),
       (array_agg(p.top_finding ORDER BY p.top_impact DESC) FILTER (WHERE p.top_finding IS NOT NULL))[1],
       CASE WHEN sum(p.open_count) > 0 THEN 'running' WHEN sum(p.error_count) > 0 THEN 'failed' ELSE 'success' END,
       $8::bigint
FROM keys k CROSS JOIN LATERAL (SELECT {3} FROM attempt_parts p WHERE {1} UNION ALL {4}) p
GROUP BY k.airflow, k.dag_id, k.task_id, k.run_id, k.try_number, k.map_index, k.trace_key
{2})sql",
                           kKeysCte, kMatchKey, AttemptRowUpsertSql("GREATEST"), kAttemptPartColumns,
                           PostgresHeldPartRowsSql(fmt::format(kPostgresHeldPartOfKeySql, "k"))),
               upsert_params);
  if (!upserted.ok()) return upserted.error();
  auto emptied = db.Query(
      fmt::format(
          "{0} DELETE FROM task_attempts p USING keys k WHERE {1} "
          "AND NOT EXISTS (SELECT 1 FROM attempt_parts q WHERE q.airflow = k.airflow AND q.dag_id = k.dag_id "
          "AND q.task_id = k.task_id AND q.run_id = k.run_id AND q.try_number = k.try_number "
          "AND q.map_index = k.map_index AND q.trace_key = k.trace_key) AND NOT EXISTS ({2})",
          kKeysCte, kMatchKey, fmt::format(fmt::runtime(PostgresHeldTracesOfKeySql()), "k")),
      arrays.Params());
  if (!emptied.ok()) return emptied.error();
  return {};
}

// The task index's SQL on one PostgreSQL connection (task_index_dialect.h): each step one statement
// over all the traces or keys at once (arrays, unnest, COPY).
class PostgresTaskIndex final : public TaskIndexDialect {
 public:
  explicit PostgresTaskIndex(PgConnection& db, const KnownSpans* known = nullptr) : db_(db), known_(known) {}
  // For traces the transaction created: their summaries in `held_parts` hold their one part, and no
  // other summary can (the writer asked when it wrote them, postgres_span_store.cc).
  PostgresTaskIndex(PgConnection& db, const std::set<std::string>& held_parts)
      : db_(db), known_(nullptr), held_parts_(&held_parts) {}

  Result<std::set<PartKey>> KeysOfTraces(const std::vector<std::string>& trace_ids) override {
    return store::KeysOfTraces(db_, trace_ids);
  }
  Result<void> DeleteParts(const std::vector<std::string>& trace_ids) override {
    return store::DeleteParts(db_, trace_ids);
  }
  Result<std::map<std::string, std::vector<IndexSpan>>> ReadSpans(
      const std::vector<std::string>& trace_ids) override {
    return store::ReadSpans(db_, trace_ids);
  }
  Result<void> InsertParts(const PartsByTrace& parts_by_trace) override {
    // A part without identity is its attempt's row: AddUp writes it from here.
    for (const auto& [trace_id, parts] : parts_by_trace) {
      for (const auto& [key, part] : parts) {
        if (!key.airflow) parts_without_identity_.insert_or_assign(key, part);
      }
    }
    return store::InsertParts(db_, parts_by_trace, held_parts_);
  }
  Result<void> InsertWholeAttempts(const std::vector<WholeAttemptPart>& attempts, std::int64_t now) override {
    std::string rows;
    CopyRows copy(rows);
    for (const WholeAttemptPart& attempt : attempts) CopyWholeAttempt(copy, *attempt.key, *attempt.part, now);
    if (rows.empty()) return {};
    return db_.CopyIn(fmt::format("COPY task_attempts ({}) FROM STDIN", kWholeAttemptColumns), rows);
  }
  Result<std::map<std::string, task_index::StoredTraceIndex>> ReadTraceIndexes(
      const std::vector<std::string>& trace_ids) override {
    return ReadPostgresTraceIndexes(db_, trace_ids);
  }
  // From what the batch's read before its upsert found (ReadStoredBeforeBatch), else one query.
  Result<std::optional<IndexSpan>> ReadSpan(const std::string& trace_id,
                                            const std::string& span_id) override {
    if (known_ != nullptr) {
      if (const auto trace = known_->find(trace_id); trace != known_->end()) {
        if (const auto span = trace->second.find(span_id); span != trace->second.end()) return span->second;
      }
    }
    return ReadPostgresIndexSpan(db_, trace_id, span_id);
  }
  Result<void> WriteAwaitedParents(
      const std::map<std::string, std::optional<std::string>>& awaited_by_trace) override {
    return WritePostgresAwaitedParents(db_, awaited_by_trace);
  }
  Result<void> AddUpChanges(const PartChanges& changes, std::int64_t now) override {
    // An attempt without identity is its part's row; an Airflow one adds the changes, and the rows it
    // could not add to are added up under the locks it took (a round trip less a batch).
    const ChangesByIdentity split = SplitByIdentity(changes);
    auto rest = AddToPostgresAttemptRows(db_, split.airflow, now);
    if (!rest.ok()) return rest.error();
    if (auto added = Reaggregate(db_, *rest, now, /*locked_already=*/true); !added.ok()) return added.error();
    std::vector<const PartKey*> other_keys;
    for (const PartKey& key : split.without_identity) other_keys.push_back(&key);
    return WriteAttemptsWithoutIdentity(other_keys, now);
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
  // An attempt without identity after a refresh: its row from the part just computed (upserted through
  // the session's incoming_attempts, postgres_batch_copy.h, keeping the settled figures:
  // AttemptRowUpsertSql), or no row when its trace has no such part any more.
  Result<void> WriteAttemptsWithoutIdentity(const std::vector<const PartKey*>& keys, std::int64_t now) {
    if (keys.empty()) return {};
    auto held = HoldInSummaries(keys);
    if (!held.ok()) return held.error();
    std::string rows;
    CopyRows copy(rows);
    std::vector<std::string> gone;      // no row: held by its summary, or no such attempt any more
    std::vector<std::string> released;  // its summary does not hold it
    for (const PartKey* key : keys) {
      const auto part = parts_without_identity_.find(*key);
      if (held->contains(key->trace_key)) {
        gone.push_back(key->trace_key);
        continue;
      }
      released.push_back(key->trace_key);
      if (part == parts_without_identity_.end()) {
        gone.push_back(key->trace_key);
      } else {
        CopyWholeAttempt(copy, *key, part->second, now);
      }
    }
    if (!released.empty()) {
      static const std::string release_sql =
          fmt::format("UPDATE traces SET attempt = NULL WHERE trace_id = ANY({}) AND attempt IS NOT NULL",
                      IdsFromHexSql("$1"));
      if (auto updated = db_.Query(release_sql, {TextArray(released)}); !updated.ok()) return updated.error();
    }
    if (!gone.empty()) {
      static const std::string remove_sql = fmt::format(
          "DELETE FROM task_attempts WHERE {} AND trace_key = ANY($1::text[])", kWithoutIdentityKey);
      if (auto removed = db_.Query(remove_sql, {TextArray(gone)}); !removed.ok()) return removed.error();
    }
    if (rows.empty()) return {};
    if (auto copied =
            db_.CopyIn(fmt::format("COPY incoming_attempts ({}) FROM STDIN", kWholeAttemptColumns), rows);
        !copied.ok()) {
      return copied.error();
    }
    static const std::string upsert_sql =
        fmt::format("INSERT INTO task_attempts ({0}) SELECT {0} FROM incoming_attempts {1}",
                    kWholeAttemptColumns, AttemptRowUpsertSql("GREATEST"));
    if (auto upserted = db_.Exec(upsert_sql); !upserted.ok()) return upserted.error();
    return {};
  }

  // The attempts of `keys` whose part a summary can hold (task_index.h, SummaryMayHoldAttempt) and whose
  // trace's summary, as stored after the batch's summary writes, says all their row would: marked
  // held there, by their trace keys.
  Result<std::set<std::string>> HoldInSummaries(const std::vector<const PartKey*>& keys) {
    std::vector<std::string> trace_hex;
    std::vector<std::string> names;
    std::vector<std::int64_t> spans;
    std::vector<std::int64_t> errors;
    std::vector<std::int64_t> starts;
    std::vector<std::int64_t> ends;
    for (const PartKey* key : keys) {
      const auto part = parts_without_identity_.find(*key);
      if (part == parts_without_identity_.end() || !task_index::SummaryMayHoldAttempt(*key, part->second))
        continue;
      trace_hex.push_back(key->trace_key);
      std::string scratch;
      names.emplace_back(StoredName(part->second.name, scratch));  // as root_name keeps it
      spans.push_back(part->second.spans);
      errors.push_back(part->second.Errors());
      starts.push_back(static_cast<std::int64_t>(part->second.start));
      ends.push_back(static_cast<std::int64_t>(part->second.end));
    }
    std::set<std::string> held;
    if (trace_hex.empty()) return held;
    static const std::string hold_sql =
        fmt::format(R"sql(
UPDATE traces t SET attempt = true
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
     AS c (trace_hex, name, spans, errors, start_unix_nano, end_unix_nano)
WHERE t.trace_id = {} AND t.root_name = c.name AND t.span_count = c.spans
  AND t.error_count = c.errors AND t.start_unix_nano = c.start_unix_nano AND t.end_unix_nano = c.end_unix_nano
RETURNING {})sql",
                    TraceIdOfHexSql("c.trace_hex"), TraceHexSql("t.trace_id"));
    auto result = db_.Query(hold_sql, {TextArray(trace_hex), TextArray(names), IntArray(spans),
                                       IntArray(errors), IntArray(starts), IntArray(ends)});
    if (!result.ok()) return result.error();
    for (int row = 0; row < result->rows(); ++row) held.emplace(result->Text(row, 0));
    return held;
  }

  PgConnection& db_;
  const KnownSpans* known_;  // may be null
  // Set for the traces the transaction created (see the constructor); null: ask the stored summaries.
  const std::set<std::string>* held_parts_ = nullptr;
  // The parts without identity InsertParts saw, for AddUp (this object lives for one index update).
  std::map<PartKey, Part> parts_without_identity_;
};

}  // namespace

Result<void> RefreshPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids) {
  PostgresTaskIndex dialect(db);
  return task_index::Refresh(dialect, trace_ids);
}

Result<void> UpdatePostgresTaskIndex(PgConnection& db, const task_index::BatchOfTraces& batch,
                                     const KnownSpans& known) {
  PostgresTaskIndex dialect(db, &known);
  return task_index::Update(dialect, batch);
}

Result<void> IndexNewPostgresTraces(PgConnection& db, const PartsByTrace& parts_by_trace,
                                    const std::set<std::string>& held_parts) {
  PostgresTaskIndex dialect(db, held_parts);
  return task_index::AddNewTraceParts(dialect, parts_by_trace);
}

Result<void> ForgetTracesInPostgresTaskIndex(PgConnection& db, const std::vector<std::string>& trace_ids) {
  PostgresTaskIndex dialect(db);
  return task_index::Forget(dialect, trace_ids);
}

Result<std::vector<std::string>> PostgresTracesMatching(PgConnection& db, std::string_view text) {
  std::string sql = fmt::format(
      "SELECT {0} FROM spans WHERE operation_id = $1 UNION SELECT {0} FROM attempt_parts WHERE app_id = $1",
      TraceHexSql("trace_id"));
  // A trace id only when the text is one: a uuid's input fails on anything else.
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::vector<PgParam> params{std::string(text)};
  if (TraceId id{}; ParseTraceHex(lower, id)) {
    sql = fmt::format("SELECT {} FROM traces WHERE trace_id = {} UNION ", TraceHexSql("trace_id"),
                      TraceIdOfHexSql("$2")) +
          sql;
    params.emplace_back(std::move(lower));
  }
  auto result = db.Query(sql + " LIMIT 200", params);
  if (!result.ok()) return result.error();
  std::vector<std::string> traces;
  traces.reserve(static_cast<std::size_t>(result->rows()));
  for (int row = 0; row < result->rows(); ++row) traces.emplace_back(result->Text(row, 0));
  return traces;
}

}  // namespace sparktrace::tracing::store
