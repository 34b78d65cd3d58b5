#include "tracing/store/postgres/index/postgres_attempt_deltas.h"

#include <spdlog/fmt/fmt.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tracing/store/increment/attempt_delta.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/index/postgres_attempt_keys.h"

namespace sparktrace::tracing::store {
namespace {

// The rows to change, as the parameters of one UPDATE … FROM unnest: the keys' arrays ($1-$7, in key
// order, as the map iterates) and the rows' new figures beside them ($8-$17), then indexed_at ($18).
std::vector<PgParam> UpdateParams(const std::map<PartKey, task_index::AttemptSums>& rows, std::int64_t now) {
  std::set<PartKey> keys;
  std::vector<std::string> states;
  std::vector<std::int64_t> start, end, spans, errors, open;
  std::array<std::vector<std::int64_t>, kSparkPhaseCount> phases;
  for (const auto& [key, sums] : rows) {
    keys.insert(key);
    start.push_back(sums.start_unix_nano);
    end.push_back(sums.end_unix_nano);
    spans.push_back(sums.span_count);
    errors.push_back(sums.error_count);
    open.push_back(sums.open_count);
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      phases[phase].push_back(sums.phase_ms[phase]);
    states.emplace_back(AttemptState(sums.open_count, sums.error_count));
  }
  std::vector<PgParam> params = KeyArrays(keys).Params();
  for (const auto* column : {&start, &end, &spans, &errors, &open}) params.emplace_back(IntArray(*column));
  for (const auto& column : phases) params.emplace_back(IntArray(column));
  params.emplace_back(TextArray(states));
  params.emplace_back(std::to_string(now));
  return params;
}

constexpr std::string_view kSumColumns =
    "start_unix_nano, end_unix_nano, span_count, error_count, open_count, resource_wait_ms, compute_ms, "
    "io_write_ms, idle_ms";

}  // namespace

Result<std::set<PartKey>> AddToPostgresAttemptRows(PgConnection& db, const PartChanges& changes,
                                                   std::int64_t indexed_unix_nano) {
  std::set<PartKey> rest;
  if (changes.empty()) return rest;
  std::set<PartKey> keys;
  for (const auto& [key, part_changes] : changes) keys.insert(key);
  if (auto locked = LockAttempts(db, keys); !locked.ok()) return locked.error();

  static const std::string read_sql = fmt::format(
      "{} SELECT k.airflow, k.dag_id, k.task_id, k.run_id, k.try_number, k.map_index, k.trace_key, "
      "p.start_unix_nano, p.end_unix_nano, p.span_count, p.error_count, p.open_count, "
      "p.resource_wait_ms, p.compute_ms, p.io_write_ms, p.idle_ms FROM keys k JOIN task_attempts p ON {}",
      kKeysCte, kMatchKey);
  auto rows = db.Query(read_sql, KeyArrays(keys).Params());
  if (!rows.ok()) return rows.error();
  std::map<PartKey, task_index::AttemptSums> stored;
  for (int row = 0; row < rows->rows(); ++row) {
    const PartKey key{
        rows->Int64(row, 0) != 0,
        TaskAttemptKey{std::string(rows->Text(row, 1)), std::string(rows->Text(row, 2)),
                       std::string(rows->Text(row, 3)), rows->Int64(row, 4), rows->Int64(row, 5)},
        std::string(rows->Text(row, 6))};
    task_index::AttemptSums sums;
    sums.start_unix_nano = rows->Int64(row, 7);
    sums.end_unix_nano = rows->Int64(row, 8);
    sums.span_count = rows->Int64(row, 9);
    sums.error_count = rows->Int64(row, 10);
    sums.open_count = rows->Int64(row, 11);
    for (std::size_t phase = 0; phase < kSparkPhaseCount; ++phase)
      sums.phase_ms[phase] = rows->Int64(row, 12 + static_cast<int>(phase));
    stored.emplace(key, std::move(sums));
  }

  std::map<PartKey, task_index::AttemptSums> updates;
  for (const auto& [key, part_changes] : changes) {
    const auto row = stored.find(key);
    if (row == stored.end()) {
      rest.insert(key);  // a new attempt: its row is added up (from the parts just written)
      continue;
    }
    std::optional<task_index::AttemptSums> next = task_index::AddPartChanges(row->second, part_changes);
    if (!next) {
      rest.insert(key);
      continue;
    }
    if (*next != row->second) updates.emplace(key, std::move(*next));
  }
  if (updates.empty()) return rest;
  // indexed_at as AttemptRowUpsertSql moves it when a row's figures change.
  static const std::string update_sql = fmt::format(
      "UPDATE task_attempts p SET start_unix_nano = k.start_unix_nano, "
      "end_unix_nano = k.end_unix_nano, span_count = k.span_count, error_count = k.error_count, "
      "open_count = k.open_count, resource_wait_ms = k.resource_wait_ms, compute_ms = k.compute_ms, "
      "io_write_ms = k.io_write_ms, idle_ms = k.idle_ms, state = k.state, "
      "indexed_at = GREATEST($18::bigint, p.indexed_at + 1) "
      "FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[], "
      "$8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], "
      "$14::bigint[], "
      "$15::bigint[], $16::bigint[], $17::text[]) AS k(airflow, dag_id, task_id, run_id, "
      "try_number, map_index, trace_key, {}, state) WHERE {}",
      kSumColumns, kMatchKey);
  auto updated = db.Query(update_sql, UpdateParams(updates, indexed_unix_nano));
  if (!updated.ok()) return updated.error();
  return rest;
}

}  // namespace sparktrace::tracing::store
