// A span's name as the stores keep it (span_rows/stored_span.h's StoredName; SQLite schema 15,
// PostgreSQL trace schema 10): a Spark Connect call's RPC prefix as one byte in spans and traces, every
// name read back exact (the span, its trace's summary, the attempt a summary holds), and a store of the
// version before migrated with the few names that start with a code byte escaped.

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
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

const std::string kConfigCall = "spark.connect.SparkConnectService/Config";

TEST(StoredNameTest, TheCallPrefixIsOneByteAndEveryNameReadsBackExact) {
  std::string scratch;
  EXPECT_EQ(StoredName(kConfigCall, scratch),
            "\x01"
            "Config");
  EXPECT_EQ(StoredName("spark.connect.SparkConnectService/", scratch), "\x01");
  EXPECT_EQ(StoredName("spark_connect.operation", scratch), "spark_connect.operation");
  EXPECT_EQ(StoredName("spark.connect.SparkConnectService", scratch), "spark.connect.SparkConnectService");
  EXPECT_EQ(StoredName("\x01odd", scratch), "\x02\x01odd");
  EXPECT_EQ(StoredName("\x02odd", scratch), "\x02\x02odd");
  EXPECT_EQ(StoredName("", scratch), "");
  for (const std::string& name :
       {kConfigCall, std::string("spark.connect.SparkConnectService/"), std::string("airflow.task"),
        std::string("\x01odd"), std::string("\x02"), std::string("x\x01"), std::string()}) {
    EXPECT_EQ(NameOfStored(StoredName(name, scratch)), name) << name;
  }
}

// One trace each: a call, two names that start with a code byte, and a name kept as it is.
std::vector<Span> NamedCalls(std::uint32_t first) {
  std::vector<Span> calls;
  std::uint32_t trace = first;
  for (const std::string& name : {kConfigCall, std::string("\x01odd"), std::string("\x02odd"),
                                  std::string("spark_connect.operation")}) {
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

  // Turns the store into the version before StoredName (the names as they are).
  void UndoStoredNames() {
    if (Sqlite()) {
      backend_.Exec(kUndoVersionFifteenSql + "PRAGMA user_version = 14");
      return;
    }
    auto raw = backend_.Raw();
    ASSERT_TRUE(raw.ok());
    UndoPostgresVersionTen(*raw);
    backend_.Exec("UPDATE sparktrace_schema SET version = 9");
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

TEST_P(StoreStoredNames, ACallKeepsItsPrefixAsOneByteAndReadsBackWhole) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = NamedCalls(1);
  ASSERT_TRUE(store->Write(calls).ok());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'Config'", Char(1))), 1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM traces WHERE root_name = {} || 'Config'", Char(1))), 1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || {} || 'odd'", Char(2), Char(1))),
            1);
  ExpectNames(*store, calls);
  // A call without Airflow identity is its own attempt, held by its trace's summary: listed by its name.
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  std::vector<std::string> names;
  for (const TaskAttemptRow& row : page->rows) names.push_back(row.name);
  EXPECT_NE(std::find(names.begin(), names.end(), kConfigCall), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "\x01odd"), names.end());
}

TEST_P(StoreStoredNames, TheMigrationEscapesTheNamesThatStartWithACodeByte) {
  const std::vector<Span> before = NamedCalls(1);
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(before).ok());
  }
  UndoStoredNames();
  ASSERT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'odd'", Char(1))),
            1);  // as kept before

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Count(Sqlite() ? "PRAGMA user_version" : "SELECT version FROM sparktrace_schema"),
            Sqlite() ? SqliteSpanStore::kSchemaVersion : kPostgresSchemaVersion);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE substr(name, 1, 1) = {}", Char(2))), 2);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM traces WHERE substr(root_name, 1, 1) = {}", Char(2))), 2);
  // The call written before keeps its whole name; one written after keeps the one byte. Both read back.
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE name = 'spark.connect.SparkConnectService/Config'"), 1);
  std::vector<Span> after = NamedCalls(11);
  ASSERT_TRUE(store->Write(after).ok());
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE name = {} || 'Config'", Char(1))), 1);
  std::vector<Span> all = before;
  all.insert(all.end(), after.begin(), after.end());
  ExpectNames(*store, all);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreStoredNames,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

}  // namespace
}  // namespace sparktrace::tracing::store
