// A span's name as the stores keep it (span_rows/stored_span.h's StoredName; SQLite schema 15-16,
// PostgreSQL trace schema 10-11): the names sparktrace writes most as one byte, any other Spark Connect
// call's RPC prefix as one byte, every name read back exact (the span, its trace's summary, the attempt a
// summary holds, the task index's re-read of a trace), and stores of the versions before migrated with
// the few names that start with a code byte escaped.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

const std::string kConfigCall = "spark.connect.SparkConnectService/Config";
// A method no code names (a newer Spark's): kept with its prefix as one byte.
const std::string kNewerCall = "spark.connect.SparkConnectService/ListSqlExecutions";

TEST(StoredNameTest, TheNamesWrittenMostAreOneByteAndEveryNameReadsBackExact) {
  std::string scratch;
  EXPECT_EQ(StoredName(kConfigCall, scratch), "\x10");
  EXPECT_EQ(StoredName("spark.connect.SparkConnectService/ExecutePlan", scratch), "\x0e");
  EXPECT_EQ(StoredName("spark_connect.operation", scratch), "\x03");
  EXPECT_EQ(StoredName(kNewerCall, scratch),
            "\x01"
            "ListSqlExecutions");
  EXPECT_EQ(StoredName("spark.connect.SparkConnectService/", scratch), "\x01");
  EXPECT_EQ(StoredName("spark.connect.SparkConnectService", scratch), "spark.connect.SparkConnectService");
  EXPECT_EQ(StoredName("airflow.task", scratch), "airflow.task");  // SQL matches it by its text
  EXPECT_EQ(StoredName("spark.phase.io_write", scratch), "spark.phase.io_write");
  EXPECT_EQ(StoredName("\x01odd", scratch), "\x02\x01odd");
  EXPECT_EQ(StoredName("\x02odd", scratch), "\x02\x02odd");
  EXPECT_EQ(StoredName("\x05odd", scratch), "\x02\x05odd");
  EXPECT_EQ(StoredName("\x1f", scratch), "\x02\x1f");  // no code yet: escaped all the same
  EXPECT_EQ(StoredName(" odd", scratch), " odd");
  EXPECT_EQ(StoredName("", scratch), "");
  std::vector<std::string> names = {kConfigCall,    kNewerCall,   "spark.connect.SparkConnectService/",
                                    "airflow.task", "\x01odd",    "\x02",
                                    "\x05odd",      "\x1f",       "x\x01",
                                    "\x7f",         std::string()};
  for (const StoredWholeName& whole : StoredWholeNames()) {
    EXPECT_EQ(StoredName(whole.name, scratch), std::string(1, whole.code)) << whole.name;
    names.emplace_back(whole.name);
  }
  for (const std::string& name : names) EXPECT_EQ(NameOfStored(StoredName(name, scratch)), name) << name;
}

// One trace each: the names sparktrace writes most, a newer call's, three that start with a code byte,
// and a name kept as it is.
std::vector<Span> NamedCalls(std::uint32_t first) {
  std::vector<Span> calls;
  std::uint32_t trace = first;
  for (const std::string& name :
       {kConfigCall, kNewerCall, std::string("\x01odd"), std::string("\x02odd"), std::string("\x05odd"),
        std::string("spark_connect.operation"), std::string("spark.stage"), std::string("plain")}) {
    calls.push_back(MakeSpan(trace, 1, 0, name, kBase + trace * kMs, kBase + (trace + 1) * kMs));
    ++trace;
  }
  return calls;
}

class StoreStoredNames : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  bool Sqlite() const { return GetParam() == StoreBackend::kSqlite; }
  // The character with code `code` in this backend's SQL.
  std::string Char(int code) const { return fmt::format("{}({})", Sqlite() ? "char" : "chr", code); }
  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }

  // Turns the store into an older version: SQLite by `sqlite_undo` (SQL), PostgreSQL by `postgres_undo`.
  void UndoTo(const std::string& sqlite_undo, std::int64_t sqlite_version,
              void (*postgres_undo)(PgConnection&), std::int64_t postgres_version) {
    if (Sqlite()) {
      backend_.Exec(fmt::format("{} PRAGMA user_version = {}", sqlite_undo, sqlite_version));
      return;
    }
    auto raw = backend_.Raw();
    ASSERT_TRUE(raw.ok());
    postgres_undo(*raw);
    backend_.Exec(fmt::format("UPDATE sparktrace_schema SET version = {}", postgres_version));
  }
  // The version before StoredName (the names as they are).
  void UndoStoredNames() { UndoTo(kUndoVersionFifteenSql, 14, UndoPostgresVersionTen, 9); }
  // The version before whole names were codes (a call's prefix one byte).
  void UndoWholeNames() { UndoTo(kUndoVersionSixteenSql, 15, UndoPostgresVersionEleven, 10); }
  std::int64_t Version() {
    return Count(Sqlite() ? "PRAGMA user_version" : "SELECT version FROM sparktrace_schema");
  }
  std::int64_t CurrentVersion() const {
    return Sqlite() ? SqliteSpanStore::kSchemaVersion : kPostgresSchemaVersion;
  }

  void WriteAndClose(const std::vector<Span>& spans) {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  // Writes NamedCalls again, in new traces, and reads every name back, those of `before` too.
  static void WriteMoreAndExpectAllNames(SpanStore& store, const std::vector<Span>& before) {
    const std::vector<Span> after = NamedCalls(11);
    ASSERT_TRUE(store.Write(after).ok());
    std::vector<Span> all = before;
    all.insert(all.end(), after.begin(), after.end());
    ExpectNames(store, all);
  }

  // Every trace's span and summary carry the names they were written with.
  static void ExpectNames(SpanStore& store, const std::vector<Span>& written) {
    for (const Span& span : written) {
      auto trace = store.GetTrace(span.trace_id);
      ASSERT_TRUE(trace.ok()) << trace.error().ToString();
      ASSERT_EQ(trace->size(), 1U);
      EXPECT_EQ(trace->front().name, span.name);
    }
    auto summaries = store.ListTraces({.limit = 0});
    ASSERT_TRUE(summaries.ok()) << summaries.error().ToString();
    ASSERT_EQ(summaries->size(), written.size());
    for (const TraceSummary& summary : *summaries) {
      const auto same = [&summary](const Span& span) { return summary.root_name == span.name; };
      EXPECT_TRUE(std::any_of(written.begin(), written.end(), same)) << summary.root_name;
    }
  }

  TestBackend backend_;
};

TEST_P(StoreStoredNames, NamesAreKeptCodedAndReadBackWhole) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = NamedCalls(1);
  ASSERT_TRUE(store->Write(calls).ok());
  for (const char* table : {"spans WHERE name", "traces WHERE root_name"}) {
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM {} = {}", table, Char(0x10))), 1) << table;  // Config
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM {} = {}", table, Char(0x03))), 1)
        << table;  // operation
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM {} = {} || 'ListSqlExecutions'", table, Char(1))), 1);
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM {} = {} || {} || 'odd'", table, Char(2), Char(5))), 1);
    EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM {} = 'plain'", table)), 1) << table;
  }
  ExpectNames(*store, calls);
  // A call without Airflow identity is its own attempt, held by its trace's summary: listed by its name.
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  std::vector<std::string> names;
  for (const TaskAttemptRow& row : page->rows) names.push_back(row.name);
  for (const Span& call : calls)
    EXPECT_NE(std::find(names.begin(), names.end(), call.name), names.end()) << call.name;
}

// The task index's SQL finds the spans it reads attributes of by their stored names: a trace it re-reads
// (its operation span written again with an earlier end, which the batch alone cannot add up) keeps its
// running operation open and its application's id.
TEST_P(StoreStoredNames, TheTaskIndexReadsCodedNamesBack) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  Span operation = MakeSpan(1, 1, 0, "spark_connect.operation", kBase, kBase + 10 * kMs);
  operation.attributes = {{"spark.connect.operation.state", std::string("running")}};
  Span lifecycle = MakeSpan(1, 2, 1, "spark.connect.operation.lifecycle", kBase + kMs, kBase + 2 * kMs);
  lifecycle.attributes = {{"spark.app.id", std::string("app-20261202-0001")}};
  ASSERT_TRUE(store->Write(std::vector<Span>{operation, lifecycle}).ok());
  operation.end_time_unix_nano = kBase + 5 * kMs;
  ASSERT_TRUE(store->Write(std::vector<Span>{operation}).ok());
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1U);
  EXPECT_EQ(page->rows[0].name, "spark_connect.operation");
  EXPECT_EQ(page->rows[0].state, "running");
  EXPECT_EQ(page->rows[0].end_unix_nano, kBase + 5 * kMs);
  auto found = store->TracesMatching("app-20261202-0001");
  ASSERT_TRUE(found.ok()) << found.error().ToString();
  EXPECT_EQ(found->size(), 1U);
}

TEST_P(StoreStoredNames, TheMigrationsEscapeTheNamesThatStartWithACodeByte) {
  const std::vector<Span> before = NamedCalls(1);
  WriteAndClose(before);
  UndoStoredNames();
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'odd'", Char(1))),
            1);  // as before
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'odd'", Char(5))), 1);

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Version(), CurrentVersion());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE substr(name, 1, 1) = {}", Char(2))), 3);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM traces WHERE substr(root_name, 1, 1) = {}", Char(2))), 3);
  // The calls written before keep their whole names; those written after are coded. All read back.
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE name = 'spark.connect.SparkConnectService/Config'"), 1);
  WriteMoreAndExpectAllNames(*store, before);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {}", Char(0x10))), 1);
}

TEST_P(StoreStoredNames, TheWholeNamesMigrationEscapesWhatTheVersionBeforeKeptAsItWas) {
  const std::vector<Span> before = NamedCalls(1);
  WriteAndClose(before);
  UndoWholeNames();
  // As the version before kept them: a call's prefix one byte, "\x05odd" as it is, "\x01odd" escaped.
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'Config'", Char(1))), 1);
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'odd'", Char(5))), 1);
  ASSERT_EQ(Count("SELECT count(*) FROM traces WHERE root_name = 'spark_connect.operation'"), 1);
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE substr(name, 1, 1) = {}", Char(2))), 2);

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Version(), CurrentVersion());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || {} || 'odd'", Char(2), Char(5))),
            1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM traces WHERE substr(root_name, 1, 1) = {}", Char(2))), 3);
  WriteMoreAndExpectAllNames(*store, before);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreStoredNames,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

}  // namespace
}  // namespace sparktrace::tracing::store
