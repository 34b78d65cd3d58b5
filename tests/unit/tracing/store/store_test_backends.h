#pragma once
// One empty store per test, on either backend: a SQLite file in a fresh directory, or a fresh
// database on the PostgreSQL server that CTest's `postgres` fixture starts
// (tests/support/postgres_server.py; its socket directory arrives as SPARKTRACE_TEST_POSTGRES_HOST).
// Without that variable the PostgreSQL tests fail and say how to run them: never a silent skip.
// CTest gives the fixture to the suites named Backends/… (instantiated for both backends) or
// Postgres… (tests/CMakeLists.txt, TEST_FIXTURE_SUITES): a suite that uses this server is named so.

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "tracing/store/open/open_span_store.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/span_store.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/store_location.h"

namespace sparktrace::tracing::store {

inline std::string BackendName(StoreBackend backend) {
  return backend == StoreBackend::kPostgres ? "PostgreSQL" : "SQLite";
}

// The test server's URL for `database`, or "" without the fixture.
inline std::string TestPostgresUrl(const std::string& database) {
  const char* host = std::getenv("SPARKTRACE_TEST_POSTGRES_HOST");
  if (host == nullptr || *host == '\0') return "";
  return "postgresql://sparktrace@/" + database + "?host=" + host + "&sslmode=disable";
}

class TestBackend {
 public:
  // Creates the empty store; false (with problem()) when it cannot.
  bool Create(StoreBackend backend) {
    static std::atomic<int> counter{0};
    const std::string unique = std::to_string(::getpid()) + "_" + std::to_string(counter++);
    if (backend == StoreBackend::kSqlite) {
      directory_ = std::filesystem::path(testing::TempDir()) / ("sparktrace_store_" + unique);
      std::filesystem::remove_all(directory_);
      std::filesystem::create_directories(directory_);
      location_ = SqliteAt((directory_ / "traces.db").string());
      return true;
    }
    if (TestPostgresUrl("postgres").empty()) {
      problem_ =
          "SPARKTRACE_TEST_POSTGRES_HOST is not set: run the PostgreSQL tests through ctest (its `postgres` "
          "fixture starts the server), or start one with tests/support/postgres_server.py start DIR and set "
          "it to DIR";
      return false;
    }
    database_ = "t_" + unique;
    auto admin = Admin();
    if (!admin.ok()) return false;
    if (auto created = admin->Exec("CREATE DATABASE " + database_); !created.ok()) {
      problem_ = created.error().ToString();
      return false;
    }
    auto location = ParseStoreLocation(TestPostgresUrl(database_));
    if (!location.ok()) {
      problem_ = location.error().ToString();
      return false;
    }
    location_ = std::move(*location);
    return true;
  }

  std::unique_ptr<SpanStore> Open(const StoreOptions& options = {}) const {
    auto store = OpenSpanStore(location_, options);
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  void Destroy() {
    if (!directory_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(directory_, ignored);
    }
    if (!database_.empty()) {
      if (auto admin = Admin(); admin.ok())
        (void)admin->Exec("DROP DATABASE IF EXISTS " + database_ + " WITH (FORCE)");
    }
  }

  // A connection to the server's maintenance database (PostgreSQL only).
  Result<PgConnection> Admin() {
    auto admin = PgConnection::Connect(TestPostgresUrl("postgres"), "test server", PgConnectOptions{});
    if (!admin.ok()) problem_ = admin.error().ToString();
    return admin;
  }
  // A plain connection to this test's database, to look at or tamper with it (PostgreSQL only).
  Result<PgConnection> Raw() const {
    return PgConnection::Connect(location_.target, "test database", PgConnectOptions{});
  }

  // Runs `sql` on a plain connection to the store (either backend), to tamper with it.
  void Exec(const std::string& sql) const {
    if (location_.backend == StoreBackend::kSqlite) {
      auto db = SqliteConnection::Open(location_.target, SQLITE_OPEN_READWRITE);
      ASSERT_TRUE(db.ok()) << db.error().ToString();
      auto ran = db->Exec(sql);
      ASSERT_TRUE(ran.ok()) << sql << ": " << ran.error().ToString();
      return;
    }
    auto db = Raw();
    ASSERT_TRUE(db.ok()) << db.error().ToString();
    auto ran = db->Exec(sql);
    ASSERT_TRUE(ran.ok()) << sql << ": " << ran.error().ToString();
  }
  // The first column of the first row `sql` gives, on a plain connection (-1 when it fails).
  std::int64_t Count(const std::string& sql) const {
    if (location_.backend == StoreBackend::kSqlite) {
      auto db = SqliteConnection::Open(location_.target, SQLITE_OPEN_READONLY);
      EXPECT_TRUE(db.ok());
      auto count = db.ok() ? db->QueryInt64(sql) : Result<std::int64_t>(db.error());
      EXPECT_TRUE(count.ok()) << sql;
      return count.ok() ? *count : -1;
    }
    auto db = Raw();
    EXPECT_TRUE(db.ok());
    auto result = db.ok() ? db->Exec(sql) : Result<PgResult>(db.error());
    EXPECT_TRUE(result.ok()) << sql;
    return result.ok() ? result->Int64(0, 0) : -1;
  }

  const StoreLocation& location() const { return location_; }
  const std::string& problem() const { return problem_; }

 private:
  std::filesystem::path directory_;
  std::string database_;
  StoreLocation location_;
  std::string problem_;
};

}  // namespace sparktrace::tracing::store
