#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/client/sqlite_statement.h"

namespace sparktrace::tracing::store {
namespace {

// A set this writer has numbered before keeps the later stamp and returns its id; one it has not is
// inserted, unless it is there already (another writer's, or numbered before a restart). Each is one
// statement when it guesses right: SQLite takes an AUTOINCREMENT id for every insert, also one that
// does nothing, so an upsert would make the ids grow by every set numbered again.
constexpr std::string_view kStampSetSql = R"sql(
UPDATE attribute_sets SET leased_unix_nano = max(leased_unix_nano, ?2) WHERE attributes = ?1 RETURNING set_id
)sql";
constexpr std::string_view kInsertSetSql = R"sql(
INSERT INTO attribute_sets (attributes, leased_unix_nano) VALUES (?1, ?2) ON CONFLICT DO NOTHING RETURNING set_id
)sql";

// ?1 is the retention's now less a lease; min() of no traces is NULL, which leaves ?1.
constexpr std::string_view kRemoveUnnamedSetsSql = R"sql(
DELETE FROM attribute_sets
WHERE leased_unix_nano < min(?1, coalesce((SELECT min(start_unix_nano) FROM traces) - ?2, ?1))
)sql";

constexpr std::int64_t kLeaseNanos = kAttributeSetLease.count();

}  // namespace

const std::string_view kAttributeSetBytesSql = "SELECT attributes FROM attribute_sets WHERE set_id = ?1";

Result<std::optional<std::int64_t>> SqliteAttributeSets::Number(const std::string& set, std::int64_t stamp) {
  const AttributeSetNumbers::Lookup lookup = numbers_.Find(set, stamp);
  if (lookup.state == AttributeSetNumbers::State::kFresh) return std::optional<std::int64_t>(lookup.id);
  if (lookup.state == AttributeSetNumbers::State::kFirstMet) return std::optional<std::int64_t>();
  const bool known = lookup.state == AttributeSetNumbers::State::kStale;
  std::optional<std::int64_t> id;
  for (const std::string_view sql :
       {known ? kStampSetSql : kInsertSetSql, known ? kInsertSetSql : kStampSetSql}) {
    auto stmt = db_.PrepareCached(sql);
    if (!stmt.ok()) return stmt.error();
    (*stmt)->BindBlobUnowned(1, set);
    (*stmt)->BindInt64(2, stamp);
    auto row = (*stmt)->Step();
    if (!row.ok()) return row.error();
    if (*row) id = (*stmt)->ColumnInt64(0);
    if (auto done = (*stmt)->Run(); !done.ok()) return done.error();
    (*stmt)->Reset();
    if (id) break;
  }
  if (!id) return Error{ErrorCode::kInternal, "numbering an attribute set returned no id"};
  numbers_.Remember(set, *id, stamp);
  return id;
}

Result<void> SqliteAttributeSets::EncodeRows(std::vector<StoredSpanRow>& rows,
                                             const std::vector<const Span*>& sources, std::int64_t now) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Span& span = *sources[i];
    std::string& encoded = rows[i].attributes;
    const std::optional<std::int64_t> stamp = BeginSharedRow(span, now, encoded, split_);
    if (!stamp) continue;
    auto id = Number(split_.set(), *stamp);
    if (!id.ok()) return id.error();
    if (!*id) {
      AppendCompactAttributes(encoded, span.attributes);
      continue;
    }
    AppendSharedAttributes(encoded, static_cast<std::uint64_t>(**id), split_.own());
  }
  return {};
}

Result<std::string> SqliteAttributeSets::AttributeSetBytes(std::uint64_t set_id) {
  if (const auto found = bytes_.find(set_id); found != bytes_.end()) return found->second;
  auto stmt = db_.PrepareCached(kAttributeSetBytesSql);
  if (!stmt.ok()) return stmt.error();
  (*stmt)->BindInt64(1, static_cast<std::int64_t>(set_id));
  auto row = (*stmt)->Step();
  if (!row.ok()) return row.error();
  if (!*row) {
    (*stmt)->Reset();
    return AttributeSetMissing(set_id);
  }
  std::string bytes((*stmt)->ColumnBlobView(0));
  (*stmt)->Reset();
  if (bytes_.size() >= kCachedAttributeSets) bytes_.clear();
  bytes_.emplace(set_id, bytes);
  return bytes;
}

Result<std::size_t> RemoveUnnamedAttributeSets(SqliteConnection& db, std::int64_t now) {
  auto stmt = db.Prepare(kRemoveUnnamedSetsSql);
  if (!stmt.ok()) return stmt.error();
  stmt->BindInt64(1, now - kLeaseNanos);
  stmt->BindInt64(2, kLeaseNanos);
  if (auto ran = stmt->Run(); !ran.ok()) return ran.error();
  return static_cast<std::size_t>(sqlite3_changes64(db.handle()));
}

}  // namespace sparktrace::tracing::store
