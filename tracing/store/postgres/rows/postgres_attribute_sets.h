#pragma once
// The PostgreSQL store's attribute sets (span_rows/shared/shared_attributes.h): what a call repeats
// from its client, connection, session and Airflow task, kept once in attribute_sets (schema version
// 8, postgres_schema.cc) and named from each span row in the shared form, by the id in its attributes
// and in its attribute_set column, which the reads join on (postgres_span_columns.h).
//
// As in the SQLite store (sqlite/rows/sqlite_attribute_sets.h, which says why retention may remove a
// set without an index from sets to rows), a set is leased: its leased_unix_nano is kept no earlier
// than half a lease before every write and every span start that names it, and retention removes a set
// whose lease is a lease older than both its own time and the earliest stored trace's start.
//
// Unlike SQLite, a batch's sets are numbered by one statement of their own, before and outside the
// batch's transaction: each writer's upsert of a set locks its row until its transaction ends, so
// numbering inside would make the writers that share a set (proxies behind one Service) wait on each
// other's whole batch. A set numbered for a batch that then fails stays, leased, until retention
// removes it; its id, committed, stays right in the writer's cache. The statement upserts the sets in
// the order of their bytes, so that two writers numbering the same sets cannot deadlock.
//
// Threads: the connection's (one store object, one thread at a time).

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/span_rows/shared/attribute_set_numbers.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

class PgConnection;

class PostgresAttributeSets {
 public:
  // Encodes the attributes of `rows` (ToStoredBatch with AttributeEncoding::kLater; rows[i] from
  // *sources[i]): the shared form where a span has a set this writer has met before (numbered by one
  // statement for the whole batch), the compact form otherwise. `now`: the write's time, unix ns.
  Result<void> EncodeRows(PgConnection& db, std::vector<StoredSpanRow>& rows,
                          const std::vector<const Span*>& sources, std::int64_t now);
  // After retention removed sets (RemoveUnnamedPostgresAttributeSets).
  void ForgetNumbers() { numbers_.Forget(); }

 private:
  AttributeSetNumbers numbers_;
  SharedAttributeSplitter split_;  // the set and own part of the span being encoded
};

// Removes the sets no stored or future span row can name (sqlite/rows/sqlite_attribute_sets.h says
// which) at `now` (unix ns); how many. The caller tells its writer to forget its ids when any went.
Result<std::int64_t> RemoveUnnamedPostgresAttributeSets(PgConnection& db, std::int64_t now);

}  // namespace sparktrace::tracing::store
