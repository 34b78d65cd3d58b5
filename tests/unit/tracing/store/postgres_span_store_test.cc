// What only the PostgreSQL store has (the rest is the conformance suite's): migrations under an
// advisory lock when many proxies start at once, refusing a newer schema (at open, and in a writer
// left running while a newer one migrated), version 9's parts without a key, a batch that lands where
// rows were written around the store, passwords never in messages, and the server's notices in the
// log rather than on stderr.

#include "tracing/store/postgres/postgres_span_store.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/postgres_schema_undo.h"
#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/postgres/held/postgres_held_parts.h"
#include "tracing/store/postgres/postgres_schema.h"
#include "tracing/store/task_index/index_columns.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class PostgresSpanStoreTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(StoreBackend::kPostgres)) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }
  TestBackend backend_;
};

TEST_F(PostgresSpanStoreTest, ManyWritersStartingAtOnceMigrateOnce) {
  constexpr int kWriters = 6;
  std::atomic<int> opened{0};
  std::vector<std::string> failures(kWriters);
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (int i = 0; i < kWriters; ++i) {
    threads.emplace_back([&, i] {
      auto store = OpenSpanStore(backend_.location(), {});
      if (!store.ok()) {
        failures[static_cast<std::size_t>(i)] = store.error().ToString();
        return;
      }
      if (auto written = (*store)->Write(
              std::vector<Span>{MakeSpan(static_cast<std::uint32_t>(i + 1), 1, 0, "s", kBase, kBase + kMs)});
          !written.ok()) {
        failures[static_cast<std::size_t>(i)] = written.error().ToString();
        return;
      }
      ++opened;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  EXPECT_EQ(opened.load(), kWriters);
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  auto version = PostgresSchemaVersion(*raw);
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(*version, kPostgresSchemaVersion);
  auto traces = raw->Exec("SELECT count(*) FROM traces");
  ASSERT_TRUE(traces.ok());
  EXPECT_EQ(traces->Int64(0, 0), kWriters);
}

TEST_F(PostgresSpanStoreTest, ANewerSchemaIsRefusedAtOpenAndByARunningWriter) {
  auto writer = backend_.Open();
  ASSERT_NE(writer, nullptr);
  ASSERT_TRUE(writer->Write(std::vector<Span>{MakeSpan(1, 1, 0, "before", kBase, kBase + kMs)}).ok());
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw->Exec("UPDATE sparktrace_schema SET version = 99").ok());

  // A writer left running while a newer sparktrace migrated: it stops writing.
  auto refused = writer->Write(std::vector<Span>{MakeSpan(2, 1, 0, "after", kBase, kBase + kMs)});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(refused.error().message.find("99"), std::string::npos) << refused.error().message;
  auto spans = raw->Exec("SELECT count(*) FROM spans");
  ASSERT_TRUE(spans.ok());
  EXPECT_EQ(spans->Int64(0, 0), 1);

  for (const bool read_only : {false, true}) {
    StoreOptions options;
    options.read_only = read_only;
    auto store = OpenSpanStore(backend_.location(), options);
    ASSERT_FALSE(store.ok()) << "read_only=" << read_only;
    EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(store.error().message.find("newer"), std::string::npos) << store.error().message;
  }
}

// A batch copies the spans of a trace without a summary row straight into spans (it holds none, as
// the store writes them); where rows written around the store break that, the batch still lands.
TEST_F(PostgresSpanStoreTest, ASpanStoredWithoutItsSummaryIsMergedNotRefused) {
  auto store = backend_.Open();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> batch{MakeSpan(1, 1, 0, "root", kBase, kBase + kMs),
                                MakeSpan(2, 1, 0, "other", kBase, kBase + kMs)};
  ASSERT_TRUE(store->Write(batch).ok());
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw->Exec("DELETE FROM traces WHERE span_count = 1 AND root_name = 'root'").ok());

  // The same span again and a new trace: the copy of trace 1's span meets the stored one.
  const std::vector<Span> again{MakeSpan(1, 1, 0, "root", kBase, kBase + 2 * kMs),
                                MakeSpan(3, 1, 0, "third", kBase, kBase + kMs)};
  auto written = store->Write(again);
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  auto trace = store->GetTrace(TraceIdOf(1));
  ASSERT_TRUE(trace.ok()) << trace.error().ToString();
  ASSERT_EQ(trace->size(), 1U);
  EXPECT_EQ(trace->front().end_time_unix_nano, kBase + 2 * kMs);
  auto summaries = store->ListTraces({});
  ASSERT_TRUE(summaries.ok());
  EXPECT_EQ(summaries->size(), 3U);  // trace 1 has its summary row again
  auto spans = raw->Exec("SELECT count(*) FROM spans");
  ASSERT_TRUE(spans.ok());
  EXPECT_EQ(spans->Int64(0, 0), 3);
}

// Writers that create the same traces at once: each finds, under the trace's lock, whether another
// created it first (then merges), so no batch fails and every trace has one summary of all its spans.
TEST_F(PostgresSpanStoreTest, WritersCreatingTheSameTracesAtOnceAllLand) {
  constexpr std::uint32_t kWriters = 4;
  constexpr std::uint32_t kTraces = 40;
  std::vector<std::string> failures(kWriters);
  std::vector<std::thread> threads;
  threads.reserve(kWriters);
  for (std::uint32_t writer = 0; writer < kWriters; ++writer) {
    threads.emplace_back([&, writer] {
      auto store = OpenSpanStore(backend_.location(), {});
      if (!store.ok()) {
        failures[writer] = store.error().ToString();
        return;
      }
      // Each writer's own span in every trace, ten traces a batch, in another order for each writer.
      for (std::uint32_t batch = 0; batch < kTraces / 10; ++batch) {
        std::vector<Span> spans;
        for (std::uint32_t n = 0; n < 10; ++n) {
          const std::uint32_t trace = 1 + (batch * 10 + n + writer * 7) % kTraces;
          spans.push_back(
              MakeSpan(trace, 1 + writer, 0, "call", kBase + writer * kMs, kBase + (writer + 1) * kMs));
        }
        if (auto written = (*store)->Write(spans); !written.ok()) {
          failures[writer] = written.error().ToString();
          return;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  auto counts = raw->Exec(
      "SELECT (SELECT count(*) FROM traces), (SELECT count(*) FROM spans), "
      "(SELECT count(*) FROM traces WHERE span_count = 4 AND end_unix_nano - start_unix_nano = 4000000)");
  ASSERT_TRUE(counts.ok()) << counts.error().ToString();
  EXPECT_EQ(counts->Int64(0, 0), kTraces);
  EXPECT_EQ(counts->Int64(0, 1), kTraces * kWriters);
  EXPECT_EQ(counts->Int64(0, 2), kTraces);
}

// An Airflow attempt's calls, each its own trace (a client without traceparent), `first` on.
std::vector<Span> AttemptCalls(std::uint32_t first, std::uint32_t count, const std::string& task) {
  std::vector<Span> calls;
  for (std::uint32_t trace = first; trace < first + count; ++trace) {
    Span call = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + trace * kMs,
                         kBase + (trace + 1) * kMs);
    call.attributes = {{"airflow.dag_id", std::string("etl")},
                       {"airflow.task_id", task},
                       {"airflow.run_id", std::string("r1")},
                       {"airflow.try_number", std::int64_t{1}}};
    calls.push_back(call);
  }
  return calls;
}

// Version 9 (postgres_schema.cc): attempt_parts loses its primary key for an index on the attempt's
// key; every attempt keeps its traces, and the parts stay one a trace and attempt as writes replace them.
TEST_F(PostgresSpanStoreTest, VersionNineKeepsEveryAttemptWithoutThePartsKey) {
  {
    auto store = backend_.Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Write(AttemptCalls(1, 30, "load")).ok());
    ASSERT_TRUE(store->Write(AttemptCalls(31, 5, "publish")).ok());
  }
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  UndoPostgresVersionTen(*raw);
  UndoPostgresVersionNine(*raw);
  ASSERT_TRUE(raw->Exec("UPDATE sparktrace_schema SET version = 8").ok());

  auto store = backend_.Open();  // a writer migrates
  ASSERT_NE(store, nullptr);
  const auto count = [&raw](const std::string& sql) {
    auto result = raw->Exec(sql);
    EXPECT_TRUE(result.ok()) << sql;
    return result.ok() ? result->Int64(0, 0) : -1;
  };
  EXPECT_EQ(count("SELECT count(*) FROM pg_indexes WHERE indexname = 'attempt_parts_pkey'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM pg_indexes WHERE indexname = 'attempt_parts_by_attempt'"), 1);
  // Calls 1-30 again (a retry), with a later end each: their parts are replaced, not added.
  std::vector<Span> again = AttemptCalls(1, 30, "load");
  for (Span& call : again) call.end_time_unix_nano += kMs;
  ASSERT_TRUE(store->Write(again).ok());
  // The parts are rows or held by their summaries (version 15), never both.
  const std::string parts = fmt::format("(SELECT {} FROM attempt_parts UNION ALL {}) p", kAttemptPartColumns,
                                        PostgresHeldPartRowsSql("true"));
  EXPECT_EQ(count("SELECT count(*) FROM " + parts), 35);
  EXPECT_EQ(count("SELECT count(*) FROM (SELECT DISTINCT airflow, dag_id, task_id, run_id, try_number, "
                  "map_index, trace_key, trace_id FROM " +
                  parts + ") d"),
            35);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok()) << page.error().ToString();
  ASSERT_EQ(page->rows.size(), 2U);
  for (const TaskAttemptRow& row : page->rows) {
    const bool load = row.key.task_id == "load";
    EXPECT_EQ(row.trace_ids.size(), load ? 30U : 5U) << row.key.task_id;
    EXPECT_EQ(row.span_count, load ? 30 : 5) << row.key.task_id;
    EXPECT_EQ(row.end_unix_nano, kBase + (load ? 32 : 36) * kMs) << row.key.task_id;
  }
}

TEST_F(PostgresSpanStoreTest, RefusesADatabaseThatIsNotOurs) {
  auto raw = backend_.Raw();
  ASSERT_TRUE(raw.ok());
  ASSERT_TRUE(raw->Exec("CREATE TABLE spans (id integer)").ok());
  auto store = OpenSpanStore(backend_.location(), {});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(store.error().message.find("not sparktrace's"), std::string::npos) << store.error().message;
}

// The default logger, for one test, writing "<level> <message>" lines to a string.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("captured",
                                                   std::make_shared<spdlog::sinks::ostream_sink_st>(lines_));
    logger->set_pattern("%l %v");
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(std::move(logger));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string lines() const { return lines_.str(); }

 private:
  std::ostringstream lines_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST_F(PostgresSpanStoreTest, ServerNoticesGoToTheLogNotToStderr) {
  const CapturedLog log;
  testing::internal::CaptureStderr();
  {
    // A second open runs the schema's IF NOT EXISTS statements over existing tables: notices.
    ASSERT_TRUE(OpenSpanStore(backend_.location(), {}).ok());
    ASSERT_TRUE(OpenSpanStore(backend_.location(), {}).ok());
    auto raw = backend_.Raw();
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw->Exec("DO $$BEGIN RAISE WARNING 'sparktrace-test-warning'; "
                          "RAISE NOTICE 'sparktrace-test-notice'; END$$")
                    .ok());
  }
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  EXPECT_EQ(stderr_text.find("NOTICE"), std::string::npos) << stderr_text;
  EXPECT_EQ(stderr_text.find("WARNING"), std::string::npos) << stderr_text;
  const std::string logged = log.lines();
  EXPECT_NE(logged.find("warning postgresql: WARNING:  sparktrace-test-warning"), std::string::npos)
      << logged;
  EXPECT_NE(logged.find("debug postgresql: NOTICE:  sparktrace-test-notice"), std::string::npos) << logged;
  EXPECT_NE(logged.find("already exists, skipping"), std::string::npos) << logged;
}

TEST_F(PostgresSpanStoreTest, AReaderOfAnEmptyDatabaseSaysToStartAProxy) {
  auto store = OpenSpanStore(backend_.location(), {.read_only = true});
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(store.error().message.find("start a proxy"), std::string::npos) << store.error().message;
}

TEST(PostgresLocationTest, PasswordsNeverAppearInMessages) {
  auto location =
      ParseStoreLocation("postgresql://writer:s3cr3t-pw@127.0.0.1:1/db?sslmode=disable&connect_timeout=1");
  ASSERT_TRUE(location.ok());
  EXPECT_EQ(location->display.find("s3cr3t-pw"), std::string::npos) << location->display;
  EXPECT_NE(location->display.find("writer:***@127.0.0.1:1/db"), std::string::npos) << location->display;
  auto unreachable = OpenSpanStore(*location, {});  // nothing listens on port 1
  ASSERT_FALSE(unreachable.ok());
  EXPECT_EQ(unreachable.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(unreachable.error().message.find("s3cr3t-pw"), std::string::npos) << unreachable.error().message;

  auto in_query = ParseStoreLocation("postgres://db.example/traces?password=hunter2&sslmode=require");
  ASSERT_TRUE(in_query.ok());
  EXPECT_EQ(in_query->display.find("hunter2"), std::string::npos) << in_query->display;
  auto malformed = ParseStoreLocation("postgresql://u:topsecret@host/db?no_such_parameter=1");
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.error().message.find("topsecret"), std::string::npos) << malformed.error().message;
  auto unknown = ParseStoreLocation("mysql://u:pw@host/db");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message.find(":pw@"), std::string::npos) << unknown.error().message;
}

// Finding 5 of the independent probe: libpq reads more spellings as a password than text edits
// catch. The display is rebuilt from libpq's own parse, so none of them can show.
TEST(PostgresLocationTest, EverySpellingLibpqReadsAsAPasswordIsHidden) {
  for (const char* url : {"postgresql://db.example/traces?pass%77ord=SECRET-1",
                          "postgresql://db.example/traces?%70assword=SECRET-1&sslmode=require",
                          "postgresql://writer:SECRET-1@db.example/traces?password=SECRET-2",
                          "postgres://writer:SECRET%2D1@[::1]:5433/traces?sslpassword=SECRET-2"}) {
    auto location = ParseStoreLocation(url);
    ASSERT_TRUE(location.ok()) << location.error().message;
    EXPECT_EQ(location->display.find("SECRET"), std::string::npos) << location->display;
    EXPECT_NE(location->display.find(":***@"), std::string::npos) << location->display;
    EXPECT_EQ(location->target, url);  // libpq still gets it whole
  }
  auto plain =
      ParseStoreLocation("postgresql://reader@db.example:5432/traces?sslmode=require&connect_timeout=3");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->display, "postgresql://reader@db.example:5432/traces?connect_timeout=3&sslmode=require");
}

TEST(PostgresLocationTest, AMalformedUrlIsReportedWithoutItsText) {
  for (const char* url : {"postgresql://db.example/traces?password%3DSECRET-1",
                          "postgresql://u:SECRET-1@db.example/traces?no_such_parameter=SECRET-2",
                          "postgresql://u:SECRET-1@[::1/traces"}) {
    auto location = ParseStoreLocation(url);
    ASSERT_FALSE(location.ok()) << url;
    EXPECT_EQ(location.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(location.error().message.find("SECRET"), std::string::npos) << location.error().message;
    EXPECT_EQ(location.error().message.find("db.example"), std::string::npos) << location.error().message;
    EXPECT_NE(location.error().message.find("is not one libpq accepts"), std::string::npos)
        << location.error().message;
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
