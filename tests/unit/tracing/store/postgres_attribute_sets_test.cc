// The PostgreSQL store's attribute sets (postgres/rows/postgres_attribute_sets.h, schema version 8):
// what rows and sets a session's calls write, that every read (the trace, another reader, the task
// index re-reading a trace's stored spans) gets the attributes back exactly, that writers numbering
// the same sets at once neither wait on each other's batches nor deadlock, and that retention's
// selections through the start pick the traces the plain ones on the end picked. Which sets retention
// removes: store_attribute_sets_test.cc, on both backends.
#include "tracing/store/postgres/rows/postgres_attribute_sets.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_batch_copy.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/postgres/postgres_span_columns.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/span_table_sql.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class PostgresAttributeSetsTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }

  // `spans` written, then the store taken back to `version` by `undo` (postgres_schema_undo.h), as a
  // binary of that version would have left it; false, with a failure, when a step failed.
  bool WrittenAtVersion(const std::vector<Span>& spans, void (*undo)(PgConnection&), std::int64_t version) {
    {
      auto store = backend_.Open();
      if (store == nullptr || !store->Write(spans).ok()) {
        ADD_FAILURE() << "writing the spans failed";
        return false;
      }
    }
    auto raw = backend_.Raw();
    if (!raw.ok()) {
      ADD_FAILURE() << raw.error().ToString();
      return false;
    }
    undo(*raw);
    const bool set = raw->Exec(fmt::format("UPDATE sparktrace_schema SET version = {}", version)).ok();
    EXPECT_TRUE(set);
    return set;
  }

  // The trace ids (hex) `sql` selects (a SELECT of trace_id, its parameter $1), sorted unless ordered.
  std::vector<std::string> Selected(const std::string& selection, std::int64_t parameter, bool sort) {
    auto db = backend_.Raw();
    EXPECT_TRUE(db.ok());
    if (!db.ok()) return {};
    auto rows = db->Query(fmt::format("SELECT {} FROM ({}) picked", TraceHexSql("trace_id"), selection),
                          {std::to_string(parameter)});
    EXPECT_TRUE(rows.ok()) << selection << ": " << (rows.ok() ? "" : rows.error().ToString());
    std::vector<std::string> ids;
    for (int row = 0; rows.ok() && row < rows->rows(); ++row) ids.emplace_back(rows->Text(row, 0));
    if (sort) std::sort(ids.begin(), ids.end());
    return ids;
  }

  TestBackend backend_;
};

TEST_F(PostgresAttributeSetsTest, ASessionsCallsShareOneSetFromTheirSecondAndReadBackExactly) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = TwentyCallsOfASessionAndOneOfAnother();
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin(), calls.begin() + 10)).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin() + 10, calls.end())).ok());

  // s-1's first call keeps the compact row, its 19 others name one set, by id in their bytes and in
  // the set id SQL reads out of them; s-2's one call has none.
  const std::string set_id = AttributeSetIdSql("attributes");
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 1);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE get_byte(attributes, 0) = 2 AND {} = "
                              "(SELECT set_id FROM attribute_sets)",
                              set_id)),
            19);
  EXPECT_EQ(Count(fmt::format("SELECT count(*) FROM spans WHERE get_byte(attributes, 0) = 1 AND {} IS NULL",
                              set_id)),
            2);
  for (const Span& call : calls) ExpectReadsBack(*store, call);
  // A reader in another process (its own object), one trace and many at once.
  StoreOptions reader_options;
  reader_options.read_only = true;
  auto reader = backend_.Open(reader_options);
  ASSERT_NE(reader, nullptr);
  ExpectReadsBack(*reader, calls[5]);
  std::vector<TraceId> ids;
  ids.reserve(calls.size());
  for (const Span& call : calls) ids.push_back(call.trace_id);
  auto all = reader->GetTraces(ids);
  ASSERT_TRUE(all.ok()) << all.error().ToString();
  ASSERT_EQ(all->size(), calls.size());
  for (const Span& read : *all) {
    const auto written = std::find_if(calls.begin(), calls.end(),
                                      [&](const Span& call) { return call.trace_id == read.trace_id; });
    ASSERT_NE(written, calls.end());
    ExpectSpanEq(read, *written);
  }
}

// The set id SQL reads out of a row's bytes (what reads join attribute_sets on since trace schema 12) is
// the id the C++ reading gives, at every varint length a bigint id can take; NULL for any other form.
TEST_F(PostgresAttributeSetsTest, SqlReadsTheSetIdOfEveryVarintLength) {
  auto db = backend_.Raw();
  ASSERT_TRUE(db.ok());
  std::vector<std::uint64_t> ids = {1, 127, 128, 300, 16383, 16384};
  for (int bits = 21; bits <= 63; bits += 7) {
    ids.push_back((std::uint64_t{1} << bits) - 1);
    ids.push_back(std::uint64_t{1} << (bits - 1));
  }
  const auto read = [&](const std::string& bytes) -> std::string {
    std::string hex;
    AppendLowerHex(hex, bytes);
    auto row = db->Query(fmt::format("SELECT {} FROM (SELECT decode($1, 'hex') AS attributes) r",
                                     AttributeSetIdSql("attributes")),
                         {hex});
    EXPECT_TRUE(row.ok()) << row.error().ToString();
    return !row.ok() ? "<error>" : row->IsNull(0, 0) ? "NULL" : std::string(row->Text(0, 0));
  };
  for (const std::uint64_t id : ids) {
    std::string row;
    AppendSharedAttributes(row, id, "");
    ASSERT_EQ(SharedAttributesSetId(row), id);
    EXPECT_EQ(read(row), std::to_string(id)) << id;
  }
  std::string compact;
  AppendCompactAttributes(compact, {{"rpc.method", std::string("Config")}});
  EXPECT_EQ(read(compact), "NULL");
  EXPECT_EQ(read("{\"rpc.method\":\"Config\"}"), "NULL");  // a row written before trace schema 3
  EXPECT_EQ(read(std::string(1, static_cast<char>(kSharedAttributesFormat))), "NULL");
  // Malformed: a truncated varint, and one longer than a bigint's 9 bytes. NULL, not a failed query.
  std::string truncated = {static_cast<char>(kSharedAttributesFormat), '\x80', '\x80'};
  EXPECT_EQ(read(truncated), "NULL");
  std::string overlong(1, static_cast<char>(kSharedAttributesFormat));
  overlong.append(10, '\x81');
  overlong.push_back('\x01');
  EXPECT_EQ(read(overlong), "NULL");
}

// A shared row whose set id is cut short (a damaged row) fails its trace's read with an error that
// names the span, as any malformed row does: not a failed query.
TEST_F(PostgresAttributeSetsTest, ASharedRowWithATruncatedSetIdIsReportedByItsSpan) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = TwentyCallsOfASessionAndOneOfAnother();
  ASSERT_TRUE(store->Write(calls).ok());
  const Span& damaged = calls[5];
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  auto updated = raw->Query(
      "WITH damaged AS (UPDATE spans SET attributes = '\\x028080'::bytea WHERE trace_id = $1::uuid "
      "AND get_byte(attributes, 0) = 2 RETURNING 1) SELECT count(*) FROM damaged",
      {ToHex(damaged.trace_id)});
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  ASSERT_EQ(updated->Int64(0, 0), 1);
  auto trace = store->GetTrace(damaged.trace_id);
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.error().code, ErrorCode::kInternal);
  EXPECT_NE(trace.error().message.find(ToHex(damaged.span_id)), std::string::npos) << trace.error().message;
  ExpectReadsBack(*store, calls[6]);  // the others read on
}

// Trace schema 12 drops spans.attribute_set: a store of version 11 migrated keeps every row readable,
// those written before and after.
TEST_F(PostgresAttributeSetsTest, TheMigrationDropsTheSetColumnAndEveryRowReadsBack) {
  const std::vector<Span> calls = TwentyCallsOfASessionAndOneOfAnother();
  ASSERT_TRUE(WrittenAtVersion({calls.begin(), calls.begin() + 10}, UndoPostgresVersionTwelve, 11));
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(Count("SELECT count(*) FROM spans WHERE attribute_set IS NOT NULL"), 9);

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
  EXPECT_EQ(Count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'spans' AND "
                  "column_name = 'attribute_set'"),
            0);
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin() + 10, calls.end())).ok());
  for (const Span& call : calls) ExpectReadsBack(*store, call);
}

// The traces of `written` read back from `store` as those spans, exactly (any other span fails).
void ExpectTracesReadBack(SpanStore& store, const std::vector<Span>& written) {
  for (const Span& span : written) {
    auto read = store.GetTrace(span.trace_id);
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    const auto same =
        std::find_if(read->begin(), read->end(), [&](const Span& r) { return r.span_id == span.span_id; });
    ASSERT_NE(same, read->end()) << ToHex(span.span_id);
    ExpectSpanEq(*same, span);
    EXPECT_EQ(
        static_cast<std::size_t>(std::count_if(written.begin(), written.end(),
                                               [&](const Span& w) { return w.trace_id == span.trace_id; })),
        read->size());
  }
}

// An Airflow task's call in trace `trace` (span `span`), on session s-1.
Span AirflowCall(std::uint32_t trace, std::uint32_t span) {
  Span call = MakeSpan(trace, span, 0, "spark.connect.SparkConnectService/ExecutePlan", kBase + span * kMs,
                       kBase + (span + 1) * kMs);
  call.attributes = SessionCall(trace, "s-1", kBase).attributes;
  call.attributes.push_back({"airflow.dag_id", std::string("etl")});
  call.attributes.push_back({"airflow.task_id", std::string("load")});
  call.attributes.push_back({"airflow.run_id", std::string("scheduled__2024-05-01")});
  call.attributes.push_back({"airflow.try_number", std::int64_t{1}});
  return call;
}

TEST_F(PostgresAttributeSetsTest, TheIndexReadsAnAttemptsIdentityOutOfTheSetsOfItsStoredSpans) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  // An Airflow task's calls in one trace, over two batches: the second batch's index update reads the
  // stored spans (their identity in a set) it adds to.
  std::vector<Span> calls;
  for (std::uint32_t span = 1; span <= 12; ++span) calls.push_back(AirflowCall(1, span));
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin(), calls.begin() + 6)).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin() + 6, calls.end())).ok());
  EXPECT_EQ(
      Count(fmt::format("SELECT count(*) FROM spans WHERE {} IS NOT NULL", AttributeSetIdSql("attributes"))),
      11);
  TaskAttemptFilter filter;
  filter.dag_id = "etl";
  auto page = store->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1U);
  EXPECT_EQ(page->rows[0].key.task_id, "load");
  EXPECT_EQ(page->rows[0].key.try_number, 1);
  EXPECT_EQ(page->rows[0].span_count, 12);
  auto read = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  ASSERT_EQ(read->size(), calls.size());
  for (std::size_t i = 0; i < calls.size(); ++i) ExpectSpanEq((*read)[i], calls[i]);
}

// Trace schema 16 (postgres_span_columns.h, IdentityInSet): a row in the shared form leaves its Airflow
// identity to its set, an "airflow.task" span and a row in the compact form keep theirs, a span without
// events keeps '', and the summaries' recomputation, the task index and the reads get every span's
// identity and events back.
TEST_F(PostgresAttributeSetsTest, ASharedRowLeavesItsIdentityToItsSetAndEveryReadGetsItBack) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  std::vector<Span> first;
  for (std::uint32_t span = 1; span <= 6; ++span) first.push_back(AirflowCall(1, span));
  Span task = MakeSpan(1, 99, 0, "airflow.task", kBase, kBase + 20 * kMs);
  task.attributes = first.front().attributes;
  first.push_back(task);
  ASSERT_TRUE(store->Write(first).ok());
  // Trace 2: one call naming the set numbered above, so its only identity is in the set.
  const std::vector<Span> second = {AirflowCall(2, 1)};
  ASSERT_TRUE(store->Write(second).ok());

  // The first call met the set first (compact form); the task span and the other five name it.
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE dag_id = '' AND task_id IS NULL AND run_id IS NULL AND "
                  "try_number IS NULL"),
            6);
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE dag_id = 'etl' AND task_id = 'load' AND try_number = 1"),
            2);
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE name = 'airflow.task' AND dag_id = 'etl'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets WHERE set_dag_id = 'etl' AND set_task_id = 'load' AND "
                  "set_run_id = 'scheduled__2024-05-01' AND set_try_number = 1"),
            1);
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE events = ''"), 8);

  // The summaries recomputed from the rows alone get the identity out of the set.
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(
      raw->Exec("UPDATE traces SET dag_id = NULL, task_id = NULL, run_id = NULL, try_number = NULL").ok());
  ASSERT_TRUE(raw->Query(std::string(kRefreshSummariesSql),
                         {TextArray(std::vector<std::string>{ToHex(TraceIdOf(1)), ToHex(TraceIdOf(2))})})
                  .ok());
  EXPECT_EQ(Count("SELECT count(*) FROM traces WHERE dag_id = 'etl' AND task_id = 'load' AND run_id = "
                  "'scheduled__2024-05-01' AND try_number = 1"),
            2);

  // The task index: one attempt of both traces, which a third batch adding to trace 1 (a call whose
  // parent is a stored call) updates from the stored spans it reads.
  Span child = AirflowCall(1, 7);
  child.parent_span_id = first[1].span_id;
  ASSERT_TRUE(store->Write(std::vector<Span>{child}).ok());
  TaskAttemptFilter filter;
  filter.dag_id = "etl";
  auto page = store->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1U);
  EXPECT_EQ(page->rows[0].key.task_id, "load");
  EXPECT_EQ(page->rows[0].key.run_id, "scheduled__2024-05-01");
  EXPECT_EQ(page->rows[0].span_count, 9);
  EXPECT_EQ(page->rows[0].trace_ids.size(), 2U);
  std::vector<Span> all = first;
  all.push_back(second.front());
  all.push_back(child);
  ExpectTracesReadBack(*store, all);
}

// A version-15 store (identity in every row, '[]' for no events, bigint counts) migrates: its rows read
// back and list as before, the summaries' counts become integers under the same index names, and the
// rows written after leave their identity to their set.
TEST_F(PostgresAttributeSetsTest, AVersionFifteenStoreMigratesAndItsNewRowsLeaveTheirIdentityToTheSet) {
  std::vector<Span> calls;
  for (std::uint32_t span = 1; span <= 8; ++span) calls.push_back(AirflowCall(1, span));
  ASSERT_TRUE(WrittenAtVersion({calls.begin(), calls.begin() + 4}, UndoPostgresVersionSixteen, 15));
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_EQ(Count("SELECT count(*) FROM spans WHERE dag_id = 'etl' AND events = '[]'"), 4);

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*PostgresSchemaVersion(*raw), kPostgresSchemaVersion);
  EXPECT_EQ(
      Count("SELECT count(*) FROM information_schema.columns WHERE table_name = 'traces' AND column_name "
            "IN ('span_count', 'error_count') AND data_type = 'integer'"),
      2);
  EXPECT_EQ(
      Count("SELECT count(*) FROM pg_indexes WHERE tablename = 'traces' AND indexname IN ('traces_pkey', "
            "'traces_by_start', 'traces_inverted', 'traces_held_parts')"),
      4);
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin() + 4, calls.end())).ok());
  // The migrated writer meets the set first (its first call compact), then names it (three rows) and
  // fills the set's identity, which the migration left NULL.
  EXPECT_EQ(Count("SELECT count(*) FROM spans WHERE dag_id = '' AND task_id IS NULL"), 3);
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets WHERE set_dag_id = 'etl'"), 1);
  ExpectTracesReadBack(*store, calls);
  TaskAttemptFilter filter;
  filter.dag_id = "etl";
  auto page = store->ListTaskAttempts(filter);
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 1U);
  EXPECT_EQ(page->rows[0].span_count, 8);
}

TEST_F(PostgresAttributeSetsTest, WritersNumberingTheSameSetsAtOnceEachGetTheOneRow) {
  // Four writers (proxies behind one Service) take calls of the same eight sessions, in different
  // orders, at once: no batch fails (no deadlock between their numberings), and each set is one row.
  constexpr int kWriters = 4;
  constexpr std::uint32_t kSessions = 8;
  constexpr std::uint32_t kBatches = 6;
  std::vector<std::unique_ptr<SpanStore>> stores;
  for (int writer = 0; writer < kWriters; ++writer) {
    stores.push_back(backend_.Open());
    ASSERT_NE(stores.back(), nullptr);
  }
  std::vector<std::vector<Span>> written(kWriters);
  std::vector<int> failed(kWriters, 0);
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (int writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&, writer] {
      for (std::uint32_t batch = 0; batch < kBatches; ++batch) {
        std::vector<Span> spans;
        for (std::uint32_t i = 0; i < kSessions; ++i) {
          const std::uint32_t session = (writer % 2 == 0) ? i : kSessions - 1 - i;  // two orders
          const auto trace = static_cast<std::uint32_t>(1 + (writer * kBatches + batch) * kSessions + i);
          spans.push_back(SessionCall(trace, fmt::format("s-{}", session), kBase + trace * kMs));
        }
        if (!stores[static_cast<std::size_t>(writer)]->Write(spans).ok()) ++failed[writer];
        for (Span& span : spans) written[writer].push_back(std::move(span));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failed, std::vector<int>(kWriters, 0));
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), kSessions);
  EXPECT_EQ(Count(fmt::format("SELECT count(DISTINCT {}) FROM spans", AttributeSetIdSql("attributes"))),
            kSessions);
  for (const std::vector<Span>& spans : written) {
    for (const Span& span : spans) ExpectReadsBack(*stores[0], span);
  }
}

TEST_F(PostgresAttributeSetsTest, RetentionsSelectionsPickWhatThePlainOnesOnTheEndPicked) {
  // Traces ending in any order against their starts: short, long, and with an inverted clock.
  std::vector<Span> spans;
  std::uint64_t random = 12345;
  const auto next = [&random] { return random = random * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (std::uint32_t trace = 1; trace <= 300; ++trace) {
    const std::uint64_t start = kBase + (next() >> 33) % 1000 * kMs;
    std::uint64_t end = start + (next() >> 33) % 5 * kMs;
    if (trace % 17 == 0) end = start + (next() >> 33) % 400 * kMs;  // long
    if (trace % 29 == 0) end = start - (next() >> 33) % 300 * kMs;  // an inverted clock
    spans.push_back(MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", start, end));
  }
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(spans).ok());
  }
  ASSERT_GT(Count("SELECT count(*) FROM traces WHERE end_unix_nano < start_unix_nano"), 5);
  for (std::int64_t limit : {1, 2, 3, 10, 17, 100, 250, 299, 300, 400}) {
    EXPECT_EQ(Selected(TracesEndedFirstSql("$1::bigint"), limit, false),
              Selected("SELECT trace_id FROM traces ORDER BY end_unix_nano, trace_id LIMIT $1::bigint", limit,
                       false))
        << limit;
  }
  for (std::uint64_t cutoff_ms : {0, 1, 5, 100, 333, 500, 999, 1200, 2000}) {
    const auto cutoff = static_cast<std::int64_t>(kBase + cutoff_ms * kMs);
    EXPECT_EQ(Selected(TracesEndedBeforeSql("$1::bigint"), cutoff, true),
              Selected("SELECT trace_id FROM traces WHERE end_unix_nano < $1::bigint", cutoff, true))
        << cutoff_ms;
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
