// The PostgreSQL store's id columns (trace schema 13, postgres_span_columns.h): a trace id a uuid and a
// span id a bigint with its top bit flipped. Every id reads back as written, whatever its top bit; a
// trace's spans that start together read in their ids' byte order (as SQLite's BLOBs and the bytea
// before order them); the SQL spellings of an id agree with the C++ one; and a store of version 12
// migrated (13: spans' and traces' ids; 14: attempt parts' trace ids) keeps every trace, summary and
// attempt, and takes more spans into its old traces.
#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/shared_dag_run_spans.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/postgres/postgres_span_columns.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

SpanId SpanIdWithFirstByte(std::uint8_t first, std::uint8_t last) {
  SpanId id{};
  id[0] = first;
  id[7] = last;
  return id;
}

// Spans of one trace that all start at kBase, their ids spread over both halves of the bigint range
// (given out of byte order), one the parent of the others.
std::vector<Span> SpansStartingTogether() {
  const std::vector<SpanId> ids = {SpanIdWithFirstByte(0xff, 0xff), SpanIdWithFirstByte(0x00, 0x01),
                                   SpanIdWithFirstByte(0x80, 0x00), SpanIdWithFirstByte(0x7f, 0xff),
                                   SpanIdWithFirstByte(0x80, 0x01)};
  std::vector<Span> spans;
  for (const SpanId& id : ids) {
    Span span = MakeSpan(7, 1, 0, "spark.stage", kBase, kBase + kMs);
    span.span_id = id;
    if (id != ids.front()) span.parent_span_id = ids.front();
    spans.push_back(std::move(span));
  }
  return spans;
}

class PostgresIdColumnsTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  // The attempts without Airflow identity of a page, as sorted lines: the listing orders attempts by
  // their start, run and try, and leaves the order of those equal in all three (the calls of one
  // millisecond) to the store, which a migration that rewrites a table may change.
  static std::vector<std::string> WithoutIdentity(const TaskAttemptPage& page) {
    std::vector<std::string> lines;
    for (const TaskAttemptRow& row : page.rows) {
      if (row.airflow) continue;
      lines.push_back(fmt::format("{} {} {} {} {}", fmt::join(row.trace_ids, ","), row.name, row.span_count,
                                  row.start_unix_nano, row.state));
    }
    std::sort(lines.begin(), lines.end());
    return lines;
  }

  std::string ColumnType(const std::string& table, const std::string& column) {
    auto db = backend_.Raw();
    EXPECT_TRUE(db.ok());
    if (!db.ok()) return "";
    auto type = db->Query(
        "SELECT data_type FROM information_schema.columns WHERE table_name = $1 AND column_name = $2",
        {table, column});
    EXPECT_TRUE(type.ok() && type->rows() == 1);
    return type.ok() && type->rows() == 1 ? std::string(type->Text(0, 0)) : "";
  }

  TestBackend backend_;
};

TEST_F(PostgresIdColumnsTest, SpanIdsReadBackExactlyAndInByteOrder) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> written = SpansStartingTogether();
  ASSERT_TRUE(store->Write(written).ok());

  std::vector<Span> expected = written;
  std::sort(expected.begin(), expected.end(),
            [](const Span& a, const Span& b) { return ToHex(a.span_id) < ToHex(b.span_id); });
  auto read = store->GetTrace(written.front().trace_id);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  ASSERT_EQ(read->size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) ExpectSpanEq((*read)[i], expected[i]);

  // The root is the span without a parent, though four others start with it.
  auto summaries = store->ListTraces({});
  ASSERT_TRUE(summaries.ok());
  ASSERT_EQ(summaries->size(), 1U);
  EXPECT_EQ(summaries->front().span_count, 5);

  // Each SQL spelling of an id is the C++ one: the column read as hex, hex read as the column.
  auto db = backend_.Raw();
  ASSERT_TRUE(db.ok());
  for (const Span& span : written) {
    auto row =
        db->Query(fmt::format("SELECT {}, {}, span_id = {}, span_id = $2::bigint, trace_id = {} FROM spans "
                              "WHERE span_id = $2::bigint",
                              TraceHexSql("trace_id"), SpanHexSql("span_id"), SpanIdOfHexSql("$1"),
                              TraceIdOfHexSql("$3")),
                  {ToHex(span.span_id), std::to_string(StoredSpanId(span.span_id)), ToHex(span.trace_id)});
    ASSERT_TRUE(row.ok()) << row.error().ToString();
    ASSERT_EQ(row->rows(), 1) << ToHex(span.span_id);
    EXPECT_EQ(row->Text(0, 0), ToHex(span.trace_id));
    EXPECT_EQ(row->Text(0, 1), ToHex(span.span_id));
    EXPECT_EQ(row->Text(0, 2), "t");
    EXPECT_EQ(row->Text(0, 4), "t");
  }
  // Text that is not an id's hex is an error or no id, never some other id.
  for (const std::string& text : {std::string("abcd"), std::string(17, 'a'), std::string()}) {
    auto none = db->Query(fmt::format("SELECT {} IS NULL", SpanIdOfHexSql("$1")), {text});
    ASSERT_TRUE(none.ok()) << none.error().ToString();
    EXPECT_EQ(none->Text(0, 0), "t") << text;
  }
  EXPECT_FALSE(db->Query(fmt::format("SELECT {}", SpanIdOfHexSql("$1")), {std::string(16, 'x')}).ok());
  for (const std::string& text : {std::string("xyz"), std::string(16, 'a'), std::string(33, 'a')})
    EXPECT_FALSE(db->Query(fmt::format("SELECT {}", TraceIdOfHexSql("$1")), {text}).ok()) << text;
}

TEST_F(PostgresIdColumnsTest, AVersionTwelveStoreMigratesWithEveryTraceAndAttempt) {
  const shared_dag_run::DagRun run = shared_dag_run::MakeDagRun(3, shared_dag_run::ReportArrives::kAfter);
  const std::vector<Span> together = SpansStartingTogether();
  std::vector<std::string> attempts_before;
  std::vector<std::string> traces_before;
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(run.writes[0]).ok());
    ASSERT_TRUE(store->Write(together).ok());
    for (int call = 0; call < 5; ++call) {
      ASSERT_TRUE(store->Write(std::vector<Span>{SessionCall(100 + call, "s-1", kBase + call * kMs)}).ok());
    }
    auto traces = store->ListTraces({});
    ASSERT_TRUE(traces.ok());
    traces_before = TraceHexes(*traces);
    TaskAttemptFilter all;
    all.limit = 100;
    auto page = store->ListTaskAttempts(all);
    ASSERT_TRUE(page.ok());
    attempts_before = WithoutIdentity(*page);
  }
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  UndoPostgresVersionThirteen(*raw);
  ASSERT_TRUE(raw->Exec("UPDATE sparktrace_schema SET version = 12").ok());
  ASSERT_EQ(ColumnType("spans", "span_id"), "bytea");

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
  EXPECT_EQ(ColumnType("spans", "trace_id"), "uuid");
  EXPECT_EQ(ColumnType("spans", "span_id"), "bigint");
  EXPECT_EQ(ColumnType("spans", "parent_span_id"), "bigint");
  EXPECT_EQ(ColumnType("traces", "trace_id"), "uuid");
  EXPECT_EQ(ColumnType("attempt_parts", "trace_id"), "uuid");

  auto traces = store->ListTraces({});
  ASSERT_TRUE(traces.ok());
  EXPECT_EQ(TraceHexes(*traces), traces_before);
  auto read = store->GetTrace(together.front().trace_id);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  ASSERT_EQ(read->size(), together.size());
  EXPECT_EQ(ToHex(read->front().span_id), "0000000000000001");  // still in byte order
  for (int call = 0; call < 5; ++call)
    ExpectReadsBack(*store, SessionCall(100 + call, "s-1", kBase + call * kMs));

  // The DAG run's other writes go into its migrated trace (the merge on the new key) and its
  // attempts come out as they would have without the migration.
  for (std::size_t i = 1; i < run.writes.size(); ++i) ASSERT_TRUE(store->Write(run.writes[i]).ok());
  TaskAttemptFilter all;
  all.limit = 100;
  auto page = store->ListTaskAttempts(all);
  ASSERT_TRUE(page.ok());
  auto dag_run = store->GetTrace(run.trace_id);
  ASSERT_TRUE(dag_run.ok()) << dag_run.error().ToString();
  std::size_t spans = 0;
  for (const auto& write : run.writes) spans += write.size();
  EXPECT_EQ(dag_run->size(), spans);
  for (const shared_dag_run::ExpectedAttempt& expected : run.attempts) {
    const auto found = std::find_if(page->rows.begin(), page->rows.end(), [&](const TaskAttemptRow& row) {
      return row.airflow && row.key.task_id == expected.key.task_id &&
             row.key.try_number == expected.key.try_number && row.key.map_index == expected.key.map_index;
    });
    ASSERT_NE(found, page->rows.end()) << expected.key.task_id;
    EXPECT_EQ(found->span_count, expected.span_count) << expected.key.task_id;
    EXPECT_EQ(found->state, expected.state) << expected.key.task_id;
    EXPECT_EQ(found->trace_ids, std::vector<std::string>{ToHex(run.trace_id)}) << expected.key.task_id;
  }
  // The attempts of the DAG run's trace, found through their parts' trace ids.
  TaskAttemptFilter of_run;
  of_run.trace_ids = std::vector<std::string>{ToHex(run.trace_id), "not a trace id"};
  auto found = store->ListTaskAttempts(of_run);
  ASSERT_TRUE(found.ok()) << found.error().ToString();
  EXPECT_EQ(found->total, static_cast<std::int64_t>(run.attempts.size()));
  ASSERT_EQ(attempts_before.size(), 6U);  // the five calls' and the stages' trace
  EXPECT_EQ(WithoutIdentity(*page), attempts_before);
}

}  // namespace
}  // namespace sparktrace::tracing::store
