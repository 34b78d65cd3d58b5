#include "tracing/store/postgres/client/pg_connection.h"

#include <libpq-fe.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdlib>

namespace sparktrace::tracing::store {
namespace {

std::string Trimmed(const char* message) {
  std::string text = message != nullptr ? message : "";
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  // libpq's messages are often two lines ("FATAL: …\nDETAIL: …"); one line reads better in a log.
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

// SQLSTATE classes a retry can fix: 08 connection exception, 40 transaction rollback (deadlock,
// serialization), 53 insufficient resources, 57P admin/crash shutdown, 55P03 lock not available,
// 57014 a statement cancelled by its timeout.
bool IsTransient(std::string_view state) {
  if (state.size() != 5) return false;
  const std::string_view cls = state.substr(0, 2);
  return cls == "08" || cls == "40" || cls == "53" || state.substr(0, 3) == "57P" || state == "55P03" ||
         state == "57014";
}

// libpq prints a server's notices on stderr, raw, unless told otherwise: a store's schema statements
// (CREATE … IF NOT EXISTS) made a dozen "NOTICE: relation … already exists, skipping" lines in the
// proxy's log at every start. Warnings go to the log as warnings; notices and below are debug detail.
// The severity is read unlocalised: a server with lc_messages = 'de_DE' spells it WARNUNG.
void LogServerNotice(void* /*unused*/, const PGresult* notice) {
  const std::string text = Trimmed(PQresultErrorMessage(notice));
  const char* severity = PQresultErrorField(notice, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity != nullptr && std::string_view(severity) == "WARNING") {
    spdlog::warn("postgresql: {}", text);
  } else {
    spdlog::debug("postgresql: {}", text);
  }
}

}  // namespace

void PgResult::Clear::operator()(pg_result* result) const { PQclear(result); }
void PgConnection::Finish::operator()(pg_conn* connection) const { PQfinish(connection); }

int PgResult::rows() const { return PQntuples(result_.get()); }
bool PgResult::IsNull(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
std::string_view PgResult::Text(int row, int column) const {
  return {PQgetvalue(result_.get(), row, column),
          static_cast<std::size_t>(PQgetlength(result_.get(), row, column))};
}
std::int64_t PgResult::Int64(int row, int column) const {
  const std::string_view text = Text(row, column);
  std::int64_t value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}
double PgResult::Double(int row, int column) const {
  const std::string text(Text(row, column));
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return end == text.c_str() ? 0.0 : value;
}

Result<PgConnection> PgConnection::Connect(const std::string& url, const std::string& display,
                                           const PgConnectOptions& options) {
  const std::string timeout = std::to_string(std::max<long long>(1, options.connect_timeout.count() / 1000));
  // A server that stops answering mid-statement would otherwise hold the writer forever: TCP
  // keepalives and tcp_user_timeout bound it below the statement timeout.
  const std::string user_timeout = std::to_string(options.statement_timeout.count());
  // Defaults first: the URL comes last, so whatever it sets itself (connect_timeout=…) wins.
  const char* keywords[] = {"connect_timeout",  "application_name", "keepalives", "keepalives_idle",
                            "tcp_user_timeout", "dbname",           nullptr};
  const char* values[] = {timeout.c_str(),      "sparktrace", "1",    "30",
                          user_timeout.c_str(), url.c_str(),  nullptr};
  PgConnection connection(PQconnectdbParams(keywords, values, /*expand_dbname=*/1), display);
  if (!connection.connection_) {
    return Error{ErrorCode::kUnavailable, fmt::format("connect to {}: out of memory", display)};
  }
  if (PQstatus(connection.connection_.get()) != CONNECTION_OK) {
    return Error{ErrorCode::kUnavailable, fmt::format("connect to {}: {}", display,
                                                      Trimmed(PQerrorMessage(connection.connection_.get())))};
  }
  PQsetNoticeReceiver(connection.connection_.get(), LogServerNotice, nullptr);
  // A writer runs short statements by key; the one walking a batch's ancestors up (a recursive query,
  // postgres_index_reads.cc) is estimated so high that PostgreSQL would compile it (JIT), 0.5 s for
  // a statement that runs in milliseconds.
  const std::string settings = fmt::format(
      "SET statement_timeout = {}; SET lock_timeout = {}; SET default_transaction_read_only = {}; "
      "SET client_encoding = 'UTF8'{}",
      options.statement_timeout.count(), options.lock_timeout.count(), options.read_only ? "on" : "off",
      options.read_only ? "" : "; SET jit = off");
  if (auto set = connection.Exec(settings); !set.ok()) return set.error();
  return connection;
}

Error PgConnection::ConnectionError(std::string_view what) const {
  return Error{ErrorCode::kUnavailable,
               fmt::format("{} on {}: {}", what, display_, Trimmed(PQerrorMessage(connection_.get())))};
}

Result<PgResult> PgConnection::Check(pg_result* raw, std::string_view what) {
  PgResult result(raw);
  last_sqlstate_.clear();
  if (raw == nullptr) return ConnectionError(what);
  const ExecStatusType status = PQresultStatus(raw);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_COPY_IN) return result;
  const char* state = PQresultErrorField(raw, PG_DIAG_SQLSTATE);
  if (state != nullptr) last_sqlstate_ = state;
  const bool transient = (state != nullptr && IsTransient(state)) || broken();
  return Error{transient ? ErrorCode::kUnavailable : ErrorCode::kInternal,
               fmt::format("{} on {}: {}", what, display_, Trimmed(PQresultErrorMessage(raw)))};
}

Result<PgResult> PgConnection::Exec(std::string_view sql) {
  const std::string text(sql);
  return Check(PQexec(connection_.get(), text.c_str()), "statement");
}

Result<PgResult> PgConnection::Query(std::string_view sql, const std::vector<PgParam>& params) {
  const std::string text(sql);
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const PgParam& param : params) values.push_back(param ? param->c_str() : nullptr);
  return Check(PQexecParams(connection_.get(), text.c_str(), static_cast<int>(values.size()), nullptr,
                            values.data(), nullptr, nullptr, 0),
               "query");
}

Result<void> PgConnection::CopyIn(std::string_view copy_sql, std::string_view data) {
  auto started = Exec(copy_sql);
  if (!started.ok()) return started.error();
  // The connection is blocking: PQputCopyData returns once the data is queued or sent.
  constexpr std::size_t kChunk = 1 << 20;
  for (std::size_t at = 0; at < data.size(); at += kChunk) {
    const std::size_t size = std::min(kChunk, data.size() - at);
    if (PQputCopyData(connection_.get(), data.data() + at, static_cast<int>(size)) != 1) {
      return ConnectionError("copy");
    }
  }
  if (PQputCopyEnd(connection_.get(), nullptr) != 1) return ConnectionError("copy");
  auto finished = Check(PQgetResult(connection_.get()), "copy");
  // Drain to the end of the command so the connection is ready for the next one.
  while (pg_result* extra = PQgetResult(connection_.get())) PQclear(extra);
  if (!finished.ok()) return finished.error();
  return {};
}

bool PgConnection::broken() const { return !connection_ || PQstatus(connection_.get()) != CONNECTION_OK; }

bool PgConnection::reusable() const {
  return !broken() && PQtransactionStatus(connection_.get()) == PQTRANS_IDLE;
}

}  // namespace sparktrace::tracing::store
