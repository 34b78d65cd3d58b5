#pragma once
// The SQLite store's attribute sets (span_rows/shared/shared_attributes.h): what a call repeats from
// its client, connection, session and Airflow task, kept once in attribute_sets (sqlite_schema.cc,
// kAttributeSetsSchema) and named by id from each span row in the shared form. Here: the writer
// numbering a batch's sets, the reads finding a set by its id, and retention removing the sets no
// row can name any more.
//
// A set's bytes never change once written. Ids are AUTOINCREMENT, never reused, so that an id cached
// by a reader stays right after its set is removed.
//
// Which sets retention may remove, without an index from sets to rows (one would cost each span
// ~35 bytes, a third of what the sets save): a set's lease, leased_unix_nano, is kept no earlier than
// half a lease (kAttributeSetLease) before the write time and before the start of every span row that
// names it (a writer stamps max(now, span start) when its cached stamp is older than that, and a stamp
// only grows). Retention removes a set whose lease is more than a lease older than both its own time
// and the earliest start of any stored trace (traces_by_start's first entry). Then no stored span
// names it (its start would be earlier than the earliest), and no writer, in any process, names it
// from its cache (its stamp would be older than half a lease before that writer's now, so the writer
// numbers the set anew, which inserts it again under a new id). Spans keep their sets until retention
// has removed every span that started before the set's last use; the store's own writer forgets its
// ids whenever retention removed any.
//
// Threads: the connection's (one store object, one thread at a time).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/span_rows/shared/attribute_set_numbers.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

class SqliteAttributeSets final : public AttributeSetSource {
 public:
  explicit SqliteAttributeSets(SqliteConnection& db) : db_(db) {}

  // Encodes the attributes of `rows` (ToStoredBatch with AttributeEncoding::kLater; rows[i] from
  // *sources[i]): the shared form where a span has a set this writer has met before, numbered within
  // the caller's write transaction, the compact form otherwise. A set is numbered from its second
  // span on: a client that opens a session for every call would otherwise get a set row (and its
  // UNIQUE entry) per call, more than its attributes inline. `now` (unix nanoseconds) is the write's time.
  Result<void> EncodeRows(std::vector<StoredSpanRow>& rows, const std::vector<const Span*>& sources,
                          std::int64_t now);
  // Forgets every id the writer numbered: after a write transaction that failed (the sets it added
  // are gone with it) and after retention removed sets (upkeep/sqlite_retention.h).
  void ForgetNumbers() { numbers_.Forget(); }

  Result<std::string> AttributeSetBytes(std::uint64_t set_id) override;

 private:
  // The set's id, numbered if need be; nullopt for a set met for the first time.
  Result<std::optional<std::int64_t>> Number(const std::string& set, std::int64_t stamp);

  SqliteConnection& db_;
  SharedAttributeSplitter split_;                         // the set and own part of the span being encoded
  AttributeSetNumbers numbers_;                           // the writer's
  std::unordered_map<std::uint64_t, std::string> bytes_;  // the reads': an id to its set's bytes (bounded)
};

// The bytes of set ?1 (one row, or none). The store's reads (SqliteAttributeSets) and the SQL
// function's (sqlite_attribute_function.h) both use it.
extern const std::string_view kAttributeSetBytesSql;

// Removes the sets no stored or future span row can name (above) at `now` (unix nanoseconds); how
// many. Retention's (upkeep/sqlite_retention.h), in the caller's write transaction; the caller tells
// its writer's SqliteAttributeSets to forget its ids when any went.
Result<std::size_t> RemoveUnnamedAttributeSets(SqliteConnection& db, std::int64_t now);

}  // namespace sparktrace::tracing::store
