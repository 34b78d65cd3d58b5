// The PostgreSQL store's schema version 4 (tracing/store/postgres/postgres_schema.cc): a batch written
// to a trace with stored spans updates its summary and task index from the batch
// (tracing/store/increment/) instead of re-reading the trace. A version-3 database migrates (its
// parts and traces without the new figures are recomputed once, then updated); a long trace written
// in batches keeps the figures a recompute gives (approx_bytes too, which the conformance suite does
// not see); and the batches after the first do not re-read the trace: a part's figure changed behind
// the store's back is carried forward, where a recompute would have put it right.

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_batch_copy.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class PostgresIncrementalIndexTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::string IncrementTestScalar(PgConnection& db, const std::string& sql) {
    auto result = db.Exec(sql);
    EXPECT_TRUE(result.ok()) << sql << ": " << result.error().ToString();
    if (!result.ok() || result->rows() == 0) return "<none>";
    return result->IsNull(0, 0) ? "<null>" : std::string(result->Text(0, 0));
  }

  TestBackend backend_;
};

// The Airflow task's operation (the attempt's owner) in trace 1, and `count` stages below it.
Span IncrementTestOwner() {
  Span operation = MakeSpan(1, 1, 0, std::string(kSparkConnectOperationSpanName), kBase, kBase + 10 * kMs);
  operation.attributes = {{std::string(kAirflowDagIdKey), std::string("etl")},
                          {std::string(kAirflowTaskIdKey), std::string("load")},
                          {std::string(kAirflowRunIdKey), std::string("scheduled__1")},
                          {std::string(kAirflowTryNumberKey), std::int64_t{1}},
                          {std::string(kAirflowMapIndexKey), std::int64_t{-1}}};
  return operation;
}

std::vector<Span> IncrementTestStages(std::uint32_t first, std::uint32_t count) {
  std::vector<Span> stages;
  for (std::uint32_t id = first; id < first + count; ++id) {
    Span stage =
        MakeSpan(1, id, 1, std::string(kSparkStageSpanName), kBase + id * kMs, kBase + (id + 5) * kMs);
    if (id % 7 == 0) stage.status_code = StatusCode::kError;
    stage.attributes = {{"spark.stage.id", std::int64_t{id}}};
    stages.push_back(std::move(stage));
  }
  return stages;
}

// The figures of the one attempt row, and of trace 1's summary, as one line each.
std::string IncrementTestAttemptLine(SpanStore& store) {
  auto page = store.ListTaskAttempts({});
  EXPECT_TRUE(page.ok()) << page.error().ToString();
  if (!page.ok() || page->rows.size() != 1) return "<not one row>";
  const TaskAttemptRow& row = page->rows[0];
  return fmt::format("{}.{} {}-{} spans {} errors {} open {} {}", row.key.dag_id, row.key.task_id,
                     row.start_unix_nano, row.end_unix_nano, row.span_count, row.error_count, row.open_count,
                     row.state);
}

std::string IncrementTestSummaryLine(SpanStore& store) {
  auto summaries = store.ListTraces({});
  EXPECT_TRUE(summaries.ok()) << summaries.error().ToString();
  if (!summaries.ok() || summaries->size() != 1) return "<not one trace>";
  const TraceSummary& summary = (*summaries)[0];
  return fmt::format("{} {}-{} spans {} errors {} {}/{}", summary.root_name, summary.start_time_unix_nano,
                     summary.end_time_unix_nano, summary.span_count, summary.error_count, summary.dag_id,
                     summary.task_id);
}

// approx_bytes as a recompute from the stored spans gives it (postgres_batch_copy.cc's
// kRefreshSummariesSql), next to the row's.
constexpr std::string_view kIncrementTestBytesSql =
    "SELECT t.approx_bytes || ' ' || (SELECT sum(octet_length(attributes) + octet_length(events) + "
    "octet_length(name) + 160) FROM spans s WHERE s.trace_id = t.trace_id) FROM traces t";

TEST_F(PostgresIncrementalIndexTest, MigratesAVersionThreeDatabaseAndRecomputesItsOldRowsOnce) {
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  ASSERT_TRUE(MigratePostgresTo(*raw, "test database", 3).ok());
  // Today's copy and summaries' SQL need today's id columns, until UndoPostgresSpanIdTypes below.
  UsePostgresIdsOfVersionThirteen(*raw);
  // Trace 1 as version 3 stored it: its spans and summary (the batch copy's rows, unchanged since), a
  // part without the operation counts and its attempt's row (figures a recompute replaces).
  std::vector<Span> first = {IncrementTestOwner()};
  for (Span& stage : IncrementTestStages(2, 3)) first.push_back(std::move(stage));
  const StoredBatch batch = ToStoredBatch(first, AttributeEncoding::kCompact);
  const BatchTraces traces = GroupByTrace(batch.rows);
  // The batch copy's columns are version 3's again (version 8 added attribute_set, version 12 dropped it);
  // the names as version 3 kept them.
  ASSERT_TRUE(raw->CopyIn(fmt::format("COPY spans ({}) FROM STDIN", kPostgresSpanWriteColumns),
                          SpanCopy(batch, traces))
                  .ok());
  UndoPostgresStoredNames(*raw);
  const std::string trace_hex = ToHex(TraceIdOf(1));
  // Today's summaries' SQL joins the sets a row's identity may be in (version 16), a table version 8
  // creates: an empty stand-in with the columns it reads, until then.
  ASSERT_TRUE(raw->Exec("CREATE TABLE attribute_sets (set_id bigint, set_dag_id text, set_task_id text, "
                        "set_run_id text, set_try_number bigint)")
                  .ok());
  ASSERT_TRUE(
      raw->Query(std::string(kRefreshSummariesSql), {TextArray(std::vector<std::string>{trace_hex})}).ok());
  ASSERT_TRUE(raw->Exec("DROP TABLE attribute_sets").ok());
  UndoPostgresSpanIdTypes(*raw);
  ASSERT_TRUE(
      raw
          ->Exec(fmt::format(
              "INSERT INTO attempt_parts VALUES (1, 'etl', 'load', 'scheduled__1', 1, -1, '', '{0}', "
              "'etl.load', NULL, {1}, {2}, 99, 0, 0, 0, 0, 0, 0, 0, NULL, -1);"
              "INSERT INTO task_attempts (airflow, dag_id, task_id, run_id, try_number, map_index, "
              "trace_key, name, trace_ids, start_unix_nano, end_unix_nano, span_count, error_count, "
              "open_count, resource_wait_ms, compute_ms, io_write_ms, idle_ms, finding_count, state) "
              "VALUES (1, 'etl', 'load', 'scheduled__1', 1, -1, '', 'etl.load', '{0}', {1}, {2}, 99, 0, "
              "0, 0, 0, 0, 0, 0, 'success')",
              trace_hex, kBase, kBase + 10 * kMs))
          .ok());

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
  EXPECT_EQ(IncrementTestScalar(*raw,
                                "SELECT count(*) FROM attempt_parts WHERE operation_count IS NULL AND "
                                "failed_operation_count IS NULL AND failed_job_count IS NULL"),
            "1");
  EXPECT_EQ(IncrementTestScalar(*raw, "SELECT count(*) FROM traces WHERE awaited_parents IS NULL"), "1");

  // The first batch after the migration recomputes the trace (its index is not exact): the stale 99
  // goes, the counts and the awaited parents are there; the next batch is added to them.
  const std::vector<Span> second = IncrementTestStages(5, 4);
  ASSERT_TRUE(store->Write(second).ok());
  EXPECT_EQ(IncrementTestScalar(*raw, "SELECT count(*) FROM attempt_parts WHERE operation_count IS NULL"),
            "0");
  EXPECT_EQ(IncrementTestScalar(*raw, "SELECT awaited_parents FROM traces"), "");
  const std::vector<Span> third = IncrementTestStages(9, 6);
  ASSERT_TRUE(store->Write(third).ok());

  TestBackend whole_backend;
  ASSERT_TRUE(whole_backend.Create(StoreBackend::kPostgres)) << whole_backend.problem();
  {
    auto whole = whole_backend.Open();
    ASSERT_NE(whole, nullptr);
    std::vector<Span> all = first;
    all.insert(all.end(), second.begin(), second.end());
    all.insert(all.end(), third.begin(), third.end());
    ASSERT_TRUE(whole->Write(all).ok());
    EXPECT_EQ(IncrementTestAttemptLine(*store), IncrementTestAttemptLine(*whole));
    EXPECT_EQ(IncrementTestSummaryLine(*store), IncrementTestSummaryLine(*whole));
  }
  whole_backend.Destroy();
  EXPECT_NE(IncrementTestAttemptLine(*store).find("spans 14 "), std::string::npos)
      << IncrementTestAttemptLine(*store);
}

TEST_F(PostgresIncrementalIndexTest, ALongTraceInBatchesIsUpdatedFromEachBatchNotReread) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  // A stage before its parent, in the first batch: the trace waits for that parent until it comes.
  Span early = MakeSpan(1, 500, 400, std::string(kSparkStageSpanName), kBase + 2 * kMs, kBase + 3 * kMs);
  // The batch that creates the trace records what it waits for, so that the next batch is added to it.
  ASSERT_TRUE(store->Write(std::vector<Span>{IncrementTestOwner(), early}).ok());
  EXPECT_EQ(IncrementTestScalar(*raw, "SELECT awaited_parents FROM traces"), ToHex(SpanIdOf(400)));
  ASSERT_TRUE(store->Write(IncrementTestStages(2, 20)).ok());

  // Behind the store's back: a part's figure and its attempt's that only a re-read of the trace would
  // put right (the attempt's row takes the part's changes, increment/attempt_delta.h).
  ASSERT_TRUE(raw->Exec("UPDATE attempt_parts SET span_count = span_count + 1000; "
                        "UPDATE task_attempts SET span_count = span_count + 1000")
                  .ok());
  ASSERT_TRUE(store->Write(IncrementTestStages(22, 20)).ok());
  EXPECT_NE(IncrementTestAttemptLine(*store).find("spans 1041 "), std::string::npos)
      << IncrementTestAttemptLine(*store);
  // A running snapshot replaced by its final form, in a later batch, and the awaited parent coming:
  // the summary and bytes follow, and the parent's arrival recomputes (the 1000 goes).
  std::vector<Span> final_forms = IncrementTestStages(30, 2);
  for (Span& stage : final_forms) {
    stage.end_time_unix_nano += 40 * kMs;
    stage.status_code = StatusCode::kError;
    stage.attributes.push_back({"spark.stage.note", std::string("a longer attribute than before")});
  }
  ASSERT_TRUE(store->Write(final_forms).ok());
  EXPECT_NE(IncrementTestAttemptLine(*store).find("spans 1041 "), std::string::npos);
  auto bytes = IncrementTestScalar(*raw, std::string(kIncrementTestBytesSql));
  EXPECT_EQ(bytes.substr(0, bytes.find(' ')), bytes.substr(bytes.find(' ') + 1)) << bytes;
  Span parent = MakeSpan(1, 400, 1, std::string(kSparkJobSpanName), kBase + kMs, kBase + 4 * kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{parent}).ok());
  EXPECT_EQ(IncrementTestScalar(*raw, "SELECT awaited_parents FROM traces"), "");

  TestBackend whole_backend;
  ASSERT_TRUE(whole_backend.Create(StoreBackend::kPostgres)) << whole_backend.problem();
  {
    auto whole = whole_backend.Open();
    ASSERT_NE(whole, nullptr);
    std::vector<Span> all = {IncrementTestOwner(), early, parent};
    for (Span& stage : IncrementTestStages(2, 40)) all.push_back(std::move(stage));
    for (Span& stage : all) {
      for (const Span& final_form : final_forms) {
        if (stage.span_id == final_form.span_id) stage = final_form;
      }
    }
    ASSERT_TRUE(whole->Write(all).ok());
    EXPECT_EQ(IncrementTestAttemptLine(*store), IncrementTestAttemptLine(*whole));
    EXPECT_EQ(IncrementTestSummaryLine(*store), IncrementTestSummaryLine(*whole));
  }
  whole_backend.Destroy();
  bytes = IncrementTestScalar(*raw, std::string(kIncrementTestBytesSql));
  EXPECT_EQ(bytes.substr(0, bytes.find(' ')), bytes.substr(bytes.find(' ') + 1)) << bytes;

  // A trace without Airflow identity (a call per trace) keeps NULL there: every batch recomputes it.
  ASSERT_TRUE(
      store->Write(std::vector<Span>{MakeSpan(2, 1, 0, "spark_connect.rpc/Config", kBase, kBase + kMs)})
          .ok());
  EXPECT_EQ(IncrementTestScalar(*raw, fmt::format("SELECT awaited_parents FROM traces WHERE trace_id = '{}'",
                                                  ToHex(TraceIdOf(2)))),
            "<null>");
}

}  // namespace
}  // namespace sparktrace::tracing::store
