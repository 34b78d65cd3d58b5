// A span's name as PostgreSQL's rows keep it (trace schema 10, span_rows/stored_span.h's StoredName):
// a Spark Connect call's RPC prefix as one byte in spans and traces, every name read back exact (the
// span, its trace's summary, the attempt a summary holds), and a version-9 store migrated with the few
// names that start with a code byte escaped.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
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

class PostgresStoredNamesTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::int64_t Count(PgConnection& db, const std::string& sql) {
    auto result = db.Exec(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.error().ToString();
    return result.ok() ? result->Int64(0, 0) : -1;
  }

  // Every trace's spans and summary carry the names they were written with.
  void ExpectNames(SpanStore& store, const std::vector<Span>& written) {
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

TEST_F(PostgresStoredNamesTest, ACallKeepsItsPrefixAsOneByteAndReadsBackWhole) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = NamedCalls(1);
  ASSERT_TRUE(store->Write(calls).ok());
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE name = chr(1) || 'Config'"), 1);
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM traces WHERE root_name = chr(1) || 'Config'"), 1);
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE name = chr(2) || chr(1) || 'odd'"), 1);
  ExpectNames(*store, calls);
  // A call without Airflow identity is its own attempt, held by its trace's summary: listed by its name.
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  std::vector<std::string> names;
  for (const TaskAttemptRow& row : page->rows) names.push_back(row.name);
  EXPECT_NE(std::find(names.begin(), names.end(), kConfigCall), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "\x01odd"), names.end());
}

TEST_F(PostgresStoredNamesTest, VersionTenEscapesTheNamesThatStartWithACodeByte) {
  const std::vector<Span> before = NamedCalls(1);
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(before).ok());
  }
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  UndoPostgresVersionTen(*raw);
  ASSERT_TRUE(raw->Exec("UPDATE sparktrace_schema SET version = 9").ok());
  ASSERT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE name = chr(1) || 'odd'"),
            1);  // as version 9 kept it

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  auto version = PostgresSchemaVersion(*raw);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, 10);
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE left(name, 1) = chr(2)"), 2);
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM traces WHERE left(root_name, 1) = chr(2)"), 2);
  // The call written before keeps its whole name; one written after keeps the one byte. Both read back.
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE name = 'spark.connect.SparkConnectService/Config'"),
            1);
  std::vector<Span> after = NamedCalls(11);
  ASSERT_TRUE(store->Write(after).ok());
  EXPECT_EQ(Count(*raw, "SELECT count(*) FROM spans WHERE name = chr(1) || 'Config'"), 1);
  std::vector<Span> all = before;
  all.insert(all.end(), after.begin(), after.end());
  ExpectNames(*store, all);
}

}  // namespace
}  // namespace sparktrace::tracing::store
