#pragma once
// PgConnection: RAII owner of one libpq connection (PGconn*), with the few calls the PostgreSQL
// store makes (statements with text parameters, COPY FROM STDIN) and one error mapping for all of
// them: a lost or refused connection, a server shutting down, a deadlock or a serialization
// failure is kUnavailable (retry later, perhaps on a new connection); anything else kInternal. Error
// messages carry PostgreSQL's own words and never the connection URL's password.
//
// Threads: one thread at a time (libpq connections are not shared). Movable, not copyable.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

struct pg_conn;
struct pg_result;

namespace sparktrace::tracing::store {

// A statement's result rows, read as text (the store asks for no binary results).
class PgResult {
 public:
  int rows() const;
  bool IsNull(int row, int column) const;
  std::string_view Text(int row, int column) const;
  std::int64_t Int64(int row, int column) const;  // 0 for null or not an integer
  double Double(int row, int column) const;       // 0 for null or not a number

 private:
  friend class PgConnection;
  struct Clear {
    void operator()(pg_result* result) const;
  };
  explicit PgResult(pg_result* result) : result_(result) {}
  std::unique_ptr<pg_result, Clear> result_;
};

// A statement parameter in text form; nullopt is SQL NULL.
using PgParam = std::optional<std::string>;

struct PgConnectOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Applied to every statement of the session (0: none). Bounds how long a store call can hang on
  // a lock or a server that stopped answering.
  std::chrono::milliseconds statement_timeout{30'000};
  std::chrono::milliseconds lock_timeout{5000};
  bool read_only = false;  // default_transaction_read_only: a reader cannot write by mistake
};

class PgConnection {
 public:
  // `url` goes to libpq as is (it reads PGPASSWORD, PGPASSFILE, PGSSLMODE… itself); `display` names
  // the store in errors.
  static Result<PgConnection> Connect(const std::string& url, const std::string& display,
                                      const PgConnectOptions& options);

  // One or more statements without parameters.
  Result<PgResult> Exec(std::string_view sql);
  // One statement with $1… parameters, all sent as text.
  Result<PgResult> Query(std::string_view sql, const std::vector<PgParam>& params);
  // COPY … FROM STDIN with `data` in COPY's text format (tracing/store/postgres/client/pg_text.h).
  Result<void> CopyIn(std::string_view copy_sql, std::string_view data);

  // Whether the connection is lost (PQstatus is not CONNECTION_OK); a lost connection is replaced,
  // not reused.
  bool broken() const;
  // Whether the next statement can run: not broken and outside any transaction (a transaction left
  // open or failed would make every later statement fail).
  bool reusable() const;
  // The SQLSTATE of the last statement if it failed with one ("23505": a unique violation); empty
  // after a statement that succeeded. Lets a caller tell one expected failure from the rest.
  const std::string& last_sqlstate() const { return last_sqlstate_; }

 private:
  struct Finish {
    void operator()(pg_conn* connection) const;
  };
  PgConnection(pg_conn* connection, std::string display)
      : connection_(connection), display_(std::move(display)) {}
  Result<PgResult> Check(pg_result* result, std::string_view what);
  Error ConnectionError(std::string_view what) const;

  std::unique_ptr<pg_conn, Finish> connection_;
  std::string display_;
  std::string last_sqlstate_;
};

}  // namespace sparktrace::tracing::store
