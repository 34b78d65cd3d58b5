#include "tracing/store/open/open_span_store.h"

#include "tracing/store/postgres/postgres_span_store.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {

Result<std::unique_ptr<SpanStore>> OpenSpanStore(const StoreLocation& location, const StoreOptions& options) {
  if (location.backend == StoreBackend::kPostgres) {
    auto store = PostgresSpanStore::Open(location, options);
    if (!store.ok()) return store.error();
    return std::unique_ptr<SpanStore>(std::move(*store));
  }
  auto store = SqliteSpanStore::Open(location.target, options);
  if (!store.ok()) return store.error();
  return std::unique_ptr<SpanStore>(std::move(*store));
}

}  // namespace sparktrace::tracing::store
