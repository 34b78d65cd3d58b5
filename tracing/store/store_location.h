#pragma once
// Where the traces are kept, as the `--store` flag names it:
//   PATH or sqlite://PATH                         a SQLite file (the embedded default)
//   postgresql://USER@HOST:PORT/DB?sslmode=…      a PostgreSQL database (also postgres://), any URL
//                                                 libpq accepts; the password comes from PGPASSWORD,
//                                                 PGPASSFILE or the URL
// The password never leaves this struct except towards libpq: `display` is what logs, errors,
// metrics and pages may show.

#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::tracing::store {

enum class StoreBackend { kSqlite, kPostgres };

struct StoreLocation {
  StoreBackend backend = StoreBackend::kSqlite;
  std::string target;  // the SQLite path, or the PostgreSQL URL as given (may hold a password)
  // The path, or the URL as libpq parsed it, rebuilt without any of its secret options (a password
  // shows as "user:***@"), however the text spelled them.
  std::string display;
};

// Parses and checks a --store value: an empty value, a SQLite URL without a path, or a PostgreSQL
// URL libpq cannot parse is kInvalidArgument, with a message that never contains the URL's text.
Result<StoreLocation> ParseStoreLocation(std::string_view text);

// The location of a SQLite file (no parsing: any path).
inline StoreLocation SqliteAt(const std::string& path) { return {StoreBackend::kSqlite, path, path}; }

}  // namespace sparktrace::tracing::store
