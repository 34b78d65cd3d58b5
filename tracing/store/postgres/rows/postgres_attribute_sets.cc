#include "tracing/store/postgres/rows/postgres_attribute_sets.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <utility>

#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"

namespace sparktrace::tracing::store {
namespace {

// $1: the sets' bytes as hex, $2: their stamps, $3-$6: the Airflow identity each holds (schema version
// 16). Every set comes back, inserted or stamped: a stamp only grows. A set numbered by a writer before
// version 16 gets its identity here (a function of its bytes, so writing it again changes nothing). In
// the order of their bytes, so that writers numbering the same sets take their row locks in one order.
constexpr std::string_view kNumberSetsSql = R"sql(
INSERT INTO attribute_sets (set_bytes, leased_unix_nano, set_dag_id, set_task_id, set_run_id, set_try_number)
SELECT decode(s.hex, 'hex'), s.leased, s.dag_id, s.task_id, s.run_id, s.try_number
FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[])
     AS s (hex, leased, dag_id, task_id, run_id, try_number)
ORDER BY 1
ON CONFLICT (set_bytes) DO UPDATE
  SET leased_unix_nano = greatest(attribute_sets.leased_unix_nano, excluded.leased_unix_nano),
      set_dag_id = excluded.set_dag_id, set_task_id = excluded.set_task_id, set_run_id = excluded.set_run_id,
      set_try_number = excluded.set_try_number
RETURNING set_id, set_bytes
)sql";

// $1: retention's now less a lease, $2: the lease; min() of no traces is NULL, which leaves $1.
constexpr std::string_view kRemoveUnnamedSetsSql = R"sql(
WITH gone AS (
  DELETE FROM attribute_sets
  WHERE leased_unix_nano < least($1::bigint, coalesce((SELECT min(start_unix_nano) FROM traces) - $2::bigint,
                                                      $1::bigint))
  RETURNING 1)
SELECT count(*) FROM gone
)sql";

constexpr std::int64_t kLeaseNanos = kAttributeSetLease.count();

// A set the batch numbers: the latest stamp a span gives it, and the rows that name it (each holding
// its own part until the id is known; their identity columns are the set's, every identity key being
// shareable).
struct PendingSet {
  std::int64_t stamp = 0;
  std::vector<std::size_t> rows;
};

std::optional<std::string> TextOrNull(const std::string* text) {
  return text != nullptr ? std::optional<std::string>(*text) : std::nullopt;
}

}  // namespace

Result<void> PostgresAttributeSets::EncodeRows(PgConnection& db, std::vector<StoredSpanRow>& rows,
                                               const std::vector<const Span*>& sources, std::int64_t now) {
  std::map<std::string, PendingSet> pending;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Span& span = *sources[i];
    std::string& encoded = rows[i].attributes;
    const std::optional<std::int64_t> stamp = BeginSharedRow(span, now, encoded, split_);
    if (!stamp) continue;
    const AttributeSetNumbers::Lookup lookup = numbers_.Find(split_.set(), *stamp);
    if (lookup.state == AttributeSetNumbers::State::kFresh) {
      AppendSharedAttributes(encoded, static_cast<std::uint64_t>(lookup.id), split_.own());
    } else if (lookup.state == AttributeSetNumbers::State::kFirstMet) {
      AppendCompactAttributes(encoded, span.attributes);
    } else {
      PendingSet& waiting = pending[split_.set()];
      waiting.stamp = std::max(waiting.stamp, *stamp);
      waiting.rows.push_back(i);
      encoded = split_.own();
    }
  }
  if (pending.empty()) return {};

  std::vector<std::string> hex;
  std::vector<std::int64_t> stamps;
  std::vector<std::optional<std::string>> dag_ids, task_ids, run_ids, try_numbers;
  hex.reserve(pending.size());
  stamps.reserve(pending.size());
  for (const auto& [set, waiting] : pending) {
    AppendLowerHex(hex.emplace_back(), set);
    stamps.push_back(waiting.stamp);
    const StoredSpanRow& named_by = rows[waiting.rows.front()];
    dag_ids.push_back(TextOrNull(named_by.dag_id));
    task_ids.push_back(TextOrNull(named_by.task_id));
    run_ids.push_back(TextOrNull(named_by.run_id));
    try_numbers.push_back(named_by.try_number
                              ? std::optional<std::string>(std::to_string(*named_by.try_number))
                              : std::nullopt);
  }
  auto numbered = db.Query(kNumberSetsSql, {TextArray(hex), IntArray(stamps), TextArray(dag_ids),
                                            TextArray(task_ids), TextArray(run_ids), TextArray(try_numbers)});
  if (!numbered.ok()) return numbered.error();
  std::size_t named = 0;
  for (int row = 0; row < numbered->rows(); ++row) {
    const std::int64_t id = numbered->Int64(row, 0);
    const auto set = ByteaFromText(numbered->Text(row, 1));
    const auto found = set ? pending.find(*set) : pending.end();
    if (found == pending.end()) continue;
    numbers_.Remember(found->first, id, found->second.stamp);
    for (const std::size_t i : found->second.rows) {
      const std::string own = std::move(rows[i].attributes);
      rows[i].attributes.clear();
      AppendSharedAttributes(rows[i].attributes, static_cast<std::uint64_t>(id), own);
    }
    ++named;
  }
  if (named != pending.size()) {
    return Error{ErrorCode::kInternal,
                 fmt::format("numbering {} attribute sets returned {} of them", pending.size(), named)};
  }
  return {};
}

Result<std::int64_t> RemoveUnnamedPostgresAttributeSets(PgConnection& db, std::int64_t now) {
  auto removed =
      db.Query(kRemoveUnnamedSetsSql, {std::to_string(now - kLeaseNanos), std::to_string(kLeaseNanos)});
  if (!removed.ok()) return removed.error();
  return removed->Int64(0, 0);
}

}  // namespace sparktrace::tracing::store
