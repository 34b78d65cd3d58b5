// The conformance suite's part on settling (tracing/store/span_store.h: ListDueAttempts,
// RecordSettlement; the figures on task_attempts.h's rows), against each backend as the rest of the
// suite (span_store_conformance_test.cc).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers
using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::system_clock;

class SpanStoreSettlement : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::unique_ptr<SpanStore> OpenStore(StoreOptions options = {}) { return backend_.Open(options); }

  // An operation span of etl.<task> run r1 try 1 in trace `trace`, and (when `job_status` is set) a
  // job below it, "running" or "succeeded".
  static std::vector<Span> Attempt(std::uint32_t trace, const std::string& task, const char* job_status) {
    Span operation = MakeSpan(trace, 1, 0, "spark_connect.operation", kBase + trace * 1000 * kMs,
                              kBase + (trace * 1000 + 10) * kMs);
    operation.attributes = {{"airflow.dag_id", std::string("etl")},
                            {"airflow.task_id", task},
                            {"airflow.run_id", std::string("r1")},
                            {"airflow.try_number", std::int64_t{1}}};
    std::vector<Span> spans = {operation};
    if (job_status != nullptr) {
      Span job =
          MakeSpan(trace, 2, 1, "spark.job", kBase + trace * 1000 * kMs, kBase + (trace * 1000 + 5) * kMs);
      job.attributes = {{"spark.job.status", std::string(job_status)}};
      spans.push_back(job);
    }
    return spans;
  }

  static AttemptRef RefOf(const std::string& task) {
    return AttemptRef{true, TaskAttemptKey{"etl", task, "r1", 1, -1}, ""};
  }

  static SettledFigures Figures(std::optional<double> core_seconds, std::optional<double> money) {
    SettledFigures figures;
    figures.core_seconds = core_seconds;
    figures.gib_seconds = core_seconds ? std::optional<double>(*core_seconds * 4) : std::nullopt;
    figures.money = money;
    figures.idle_fraction = 0.25;
    figures.settled_unix_nano = kBase + 5000 * kMs;
    return figures;
  }

  // Long enough after the writes that everything written is quiet for an hour.
  static system_clock::time_point Later() { return system_clock::now() + hours(2); }

  TestBackend backend_;
};

INSTANTIATE_TEST_SUITE_P(Backends, SpanStoreSettlement,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

TEST_P(SpanStoreSettlement, AnAttemptIsDueOnceItEndedAndWasQuiet) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(Attempt(1, "load", "running")).ok());
  auto running = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(running.ok()) << running.error().ToString();
  EXPECT_TRUE(running->due.empty());
  EXPECT_EQ(running->backlog, 0);

  ASSERT_TRUE(store->Write(Attempt(1, "load", "succeeded")).ok());
  auto too_soon = store->ListDueAttempts(system_clock::now(), hours(1), 10);
  ASSERT_TRUE(too_soon.ok()) << too_soon.error().ToString();
  EXPECT_TRUE(too_soon->due.empty());
  EXPECT_EQ(too_soon->backlog, 1);  // counted, though not quiet yet

  auto due = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->due.size(), 1u);
  EXPECT_EQ(due->due[0].ref, RefOf("load"));
  EXPECT_GT(due->due[0].indexed_unix_nano, 0u);
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  EXPECT_EQ(page->rows[0].indexed_unix_nano, due->due[0].indexed_unix_nano);
  EXPECT_FALSE(page->rows[0].settled.has_value());
}

TEST_P(SpanStoreSettlement, TheLimitBoundsAPassLongestQuietFirst) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (std::uint32_t trace = 1; trace <= 3; ++trace) {
    ASSERT_TRUE(store->Write(Attempt(trace, "t" + std::to_string(trace), nullptr)).ok());
  }
  auto due = store->ListDueAttempts(Later(), hours(1), 2);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->due.size(), 2u);
  EXPECT_EQ(due->backlog, 3);
  EXPECT_EQ(due->due[0].ref.key.task_id, "t1");
  EXPECT_EQ(due->due[1].ref.key.task_id, "t2");
}

TEST_P(SpanStoreSettlement, OneSettlerClaimsAVersionAndTheRowShowsItsFigures) {
  auto first = OpenStore();
  auto second = OpenStore();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->Write(Attempt(1, "load", "succeeded")).ok());
  auto due = second->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->due.size(), 1u);
  const DueAttempt attempt = due->due[0];

  auto claimed = first->RecordSettlement(attempt.ref, attempt.indexed_unix_nano, Figures(120, 1.5));
  ASSERT_TRUE(claimed.ok()) << claimed.error().ToString();
  EXPECT_TRUE(claimed->claimed);
  EXPECT_FALSE(claimed->previous.has_value());
  auto again = second->RecordSettlement(attempt.ref, attempt.indexed_unix_nano, Figures(999, 9));
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_FALSE(again->claimed);

  auto page = second->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  ASSERT_TRUE(page->rows[0].settled.has_value());
  EXPECT_TRUE(page->rows[0].settled_current);
  EXPECT_DOUBLE_EQ(*page->rows[0].settled->core_seconds, 120);
  EXPECT_DOUBLE_EQ(*page->rows[0].settled->gib_seconds, 480);
  EXPECT_DOUBLE_EQ(*page->rows[0].settled->money, 1.5);
  EXPECT_DOUBLE_EQ(*page->rows[0].settled->idle_fraction, 0.25);
  EXPECT_FALSE(page->rows[0].settled->regression);
  EXPECT_EQ(page->rows[0].settled->settled_unix_nano, kBase + 5000 * kMs);

  auto after = second->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(after.ok());
  EXPECT_TRUE(after->due.empty());
  EXPECT_EQ(after->backlog, 0);
}

TEST_P(SpanStoreSettlement, ConcurrentSettlersClaimAVersionOnce) {
  {
    auto writer = OpenStore();
    ASSERT_NE(writer, nullptr);
    for (std::uint32_t trace = 1; trace <= 20; ++trace) {
      ASSERT_TRUE(writer->Write(Attempt(trace, "t" + std::to_string(trace), nullptr)).ok());
    }
  }
  std::atomic<int> claims{0};
  std::atomic<bool> failed{false};
  // Both list before either records: each believes all 20 are its to settle.
  std::latch listed(2);
  const auto settle = [&] {
    auto store = OpenStore();
    auto due = store == nullptr ? Result<DueAttempts>(Error{ErrorCode::kInternal, "no store"})
                                : store->ListDueAttempts(Later(), hours(1), 100);
    listed.arrive_and_wait();
    if (!due.ok() || due->due.size() != 20u) {
      ADD_FAILURE() << (due.ok() ? std::to_string(due->due.size()) + " due" : due.error().ToString());
      failed = true;
      return;
    }
    for (const DueAttempt& attempt : due->due) {
      auto claim = store->RecordSettlement(attempt.ref, attempt.indexed_unix_nano, Figures(1, std::nullopt));
      if (!claim.ok()) ADD_FAILURE() << claim.error().ToString();
      if (!claim.ok()) failed = true;
      if (claim.ok() && claim->claimed) ++claims;
    }
  };
  std::thread other(settle);
  settle();
  other.join();
  EXPECT_FALSE(failed);
  EXPECT_EQ(claims.load(), 20);
}

TEST_P(SpanStoreSettlement, ALateSpanReopensTheAttemptAndKeepsItsFiguresUntilResettled) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Write(Attempt(1, "load", "succeeded")).ok());
  auto due = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->due.size(), 1u);
  const std::uint64_t first_version = due->due[0].indexed_unix_nano;
  ASSERT_TRUE(store->RecordSettlement(RefOf("load"), first_version, Figures(100, 2))->claimed);

  // The same batch again changes no sum: the row stays settled.
  ASSERT_TRUE(store->Write(Attempt(1, "load", "succeeded")).ok());
  auto unchanged = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(unchanged.ok());
  EXPECT_TRUE(unchanged->due.empty());

  // A late span of the attempt (another trace of it) changes its row.
  std::vector<Span> late = Attempt(2, "load", nullptr);
  ASSERT_TRUE(store->Write(late).ok());
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->rows.size(), 1u);
  ASSERT_TRUE(page->rows[0].settled.has_value());
  EXPECT_FALSE(page->rows[0].settled_current);
  EXPECT_DOUBLE_EQ(*page->rows[0].settled->money, 2);
  EXPECT_GT(page->rows[0].indexed_unix_nano, first_version);

  auto reopened = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(reopened.ok());
  ASSERT_EQ(reopened->due.size(), 1u);
  EXPECT_EQ(reopened->due[0].indexed_unix_nano, page->rows[0].indexed_unix_nano);
  auto stale = store->RecordSettlement(RefOf("load"), first_version, Figures(1, 1));
  ASSERT_TRUE(stale.ok());
  EXPECT_FALSE(stale->claimed);  // figures of a version the row no longer is
  auto resettled =
      store->RecordSettlement(RefOf("load"), reopened->due[0].indexed_unix_nano, Figures(150, 3));
  ASSERT_TRUE(resettled.ok());
  EXPECT_TRUE(resettled->claimed);
  ASSERT_TRUE(resettled->previous.has_value());
  EXPECT_DOUBLE_EQ(*resettled->previous->core_seconds, 100);
  EXPECT_DOUBLE_EQ(*resettled->previous->money, 2);
}

TEST_P(SpanStoreSettlement, CostOrderPutsSettledRowsFirstByMoneyThenCores) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  for (std::uint32_t trace = 1; trace <= 5; ++trace) {
    ASSERT_TRUE(store->Write(Attempt(trace, "t" + std::to_string(trace), nullptr)).ok());
  }
  auto due = store->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(due.ok());
  const auto settle = [&](const std::string& task, std::optional<double> cores, std::optional<double> money) {
    for (const DueAttempt& attempt : due->due) {
      if (attempt.ref.key.task_id == task) {
        ASSERT_TRUE(
            store->RecordSettlement(attempt.ref, attempt.indexed_unix_nano, Figures(cores, money))->claimed);
      }
    }
  };
  settle("t1", 10, 5.0);
  settle("t2", 500, std::nullopt);  // no prices: after every priced row
  settle("t3", 20, 9.0);
  settle("t4", std::nullopt, std::nullopt);  // settled, cost unknown
  // t5 unsettled: last
  const auto order = [&](TaskAttemptOrder sort) {
    TaskAttemptFilter filter;
    filter.order = sort;
    std::vector<std::string> tasks;
    auto page = store->ListTaskAttempts(filter);
    EXPECT_TRUE(page.ok());
    if (page.ok()) {
      for (const auto& row : page->rows) tasks.push_back(row.key.task_id);
    }
    return tasks;
  };
  EXPECT_EQ(order(TaskAttemptOrder::kCostDescending),
            (std::vector<std::string>{"t3", "t1", "t2", "t4", "t5"}));
  EXPECT_EQ(order(TaskAttemptOrder::kCostAscending),
            (std::vector<std::string>{"t1", "t3", "t2", "t4", "t5"}));
  EXPECT_EQ(order(TaskAttemptOrder::kOldestFirst), (std::vector<std::string>{"t1", "t2", "t3", "t4", "t5"}));
  EXPECT_EQ(order(TaskAttemptOrder::kNewestFirst), (std::vector<std::string>{"t5", "t4", "t3", "t2", "t1"}));
}

TEST_P(SpanStoreSettlement, AReaderListsButCannotRecord) {
  {
    auto writer = OpenStore();
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->Write(Attempt(1, "load", nullptr)).ok());
  }
  StoreOptions options;
  options.read_only = true;
  auto reader = OpenStore(options);
  ASSERT_NE(reader, nullptr);
  auto due = reader->ListDueAttempts(Later(), hours(1), 10);
  ASSERT_TRUE(due.ok()) << due.error().ToString();
  ASSERT_EQ(due->due.size(), 1u);
  auto recorded = reader->RecordSettlement(due->due[0].ref, due->due[0].indexed_unix_nano, Figures(1, 1));
  ASSERT_FALSE(recorded.ok());
  EXPECT_EQ(recorded.error().code, ErrorCode::kInvalidArgument);
}

// A trace without Airflow identity has nothing to settle unless it names an application (whose driver
// feed brings the executors a cost is made of): a flood of calls without a traceparent, a trace each,
// does not queue up ahead of the attempts that do.
TEST_P(SpanStoreSettlement, ATraceWithoutIdentityIsDueOnlyWhenItNamesAnApplication) {
  auto store = OpenStore();
  ASSERT_NE(store, nullptr);
  const auto call = [](std::uint32_t trace) {
    Span span = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", kBase + trace * kMs,
                         kBase + (trace + 1) * kMs);
    span.attributes = {{"rpc.method", std::string("Config")}};
    return span;
  };
  const auto application = [](std::uint32_t trace, std::uint32_t span_id, std::uint32_t parent) {
    Span span =
        MakeSpan(trace, span_id, parent, "spark.application", kBase + trace * kMs, kBase + (trace + 5) * kMs);
    span.attributes = {{"spark.app.id", "app-" + std::to_string(trace)},
                       {"spark.app.name", std::string("nightly")}};
    return span;
  };
  // Forty calls in one batch (the store's many-row insert) and one alone, and an application's trace.
  std::vector<Span> calls;
  for (std::uint32_t trace = 100; trace < 140; ++trace) calls.push_back(call(trace));
  ASSERT_TRUE(store->Write(calls).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>{call(1)}).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>{application(2, 1, 0)}).ok());

  auto due = store->ListDueAttempts(Later(), hours(1), 100);
  ASSERT_TRUE(due.ok()) << due.error().ToString();
  EXPECT_EQ(due->backlog, 1);
  ASSERT_EQ(due->due.size(), 1u);
  EXPECT_FALSE(due->due[0].ref.airflow);
  EXPECT_EQ(due->due[0].ref.trace_key, ToHex(TraceIdOf(2)));
  auto page = store->ListTaskAttempts({});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->total, 42);  // listed as before, each call its own row

  // The lone call's trace gains the application's span: it has something to settle from now on.
  ASSERT_TRUE(store->Write(std::vector<Span>{application(1, 2, 1)}).ok());
  auto both = store->ListDueAttempts(Later(), hours(1), 100);
  ASSERT_TRUE(both.ok()) << both.error().ToString();
  EXPECT_EQ(both->backlog, 2);
  std::vector<std::string> keys;
  for (const DueAttempt& attempt : both->due) keys.push_back(attempt.ref.trace_key);
  EXPECT_THAT(keys, testing::UnorderedElementsAre(ToHex(TraceIdOf(1)), ToHex(TraceIdOf(2))));
}

}  // namespace
}  // namespace sparktrace::tracing::store
