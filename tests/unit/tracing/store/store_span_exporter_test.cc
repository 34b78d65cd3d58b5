#include "tracing/store/export/store_span_exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/store_test_spans.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

// A store that refuses writes (kUnavailable, as a stopped PostgreSQL does) while `down`, and
// otherwise records the span names it was given, in order.
class FlakyStore final : public SpanStore {
 public:
  FlakyStore(bool& down, std::vector<std::string>& written, std::function<void()>& after_write)
      : down_(down), written_(written), after_write_(after_write) {}
  Result<WriteStats> Write(std::span<const Span> spans) override {
    if (down_) return Error{ErrorCode::kUnavailable, "connection refused"};
    // A statement error for what a batch holds: refused however often it comes.
    for (const Span& span : spans) {
      if (span.name == "poison") return Error{ErrorCode::kInternal, "value out of range"};
    }
    for (const Span& span : spans) written_.push_back(span.name);
    if (after_write_) after_write_();
    return WriteStats{spans.size(), 0, 1};
  }
  Result<std::vector<TraceSummary>> ListTraces(const TraceFilter&) override {
    return std::vector<TraceSummary>{};
  }
  Result<std::vector<Span>> GetTrace(const TraceId&) override { return Error{ErrorCode::kNotFound, "none"}; }
  Result<TraceId> FindTraceByOperation(std::string_view) override {
    return Error{ErrorCode::kNotFound, "none"};
  }
  Result<TaskAttemptPage> ListTaskAttempts(const TaskAttemptFilter&) override { return TaskAttemptPage{}; }
  Result<std::vector<std::string>> TracesMatching(std::string_view) override {
    return std::vector<std::string>{};
  }
  Result<DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point, std::chrono::milliseconds,
                                      std::size_t) override {
    return DueAttempts{};
  }
  Result<SettleClaim> RecordSettlement(const AttemptRef&, std::uint64_t, const SettledFigures&) override {
    return SettleClaim{};
  }
  Result<RetentionStats> EnforceRetention(std::chrono::system_clock::time_point) override {
    return RetentionStats{};
  }
  const std::string& description() const override { return description_; }
  bool read_only() const override { return false; }

 private:
  bool& down_;
  std::vector<std::string>& written_;
  std::function<void()>& after_write_;
  std::string description_ = "flaky";
};

class StoreSpanExporterTest : public testing::Test {
 protected:
  void SetUp() override {
    directory_ = std::filesystem::path(testing::TempDir()) /
                 ("sparktrace_exporter_" + std::to_string(::getpid()) + "_" +
                  testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(directory_);
  }
  void TearDown() override { std::filesystem::remove_all(directory_); }

  std::unique_ptr<StoreSpanExporter> Exporter(std::uint64_t spool_bytes) {
    SpanSpoolOptions options;
    options.directory = directory_;
    options.max_bytes = spool_bytes;
    options.segment_bytes = 64 << 10;
    auto spool = SpanSpool::Open(options);
    EXPECT_TRUE(spool.ok()) << spool.error().ToString();
    StoreSpanExporterOptions exporter_options;
    exporter_options.reopen_backoff_initial = std::chrono::milliseconds(0);
    exporter_options.reopen_backoff_max = std::chrono::milliseconds(0);
    return std::make_unique<StoreSpanExporter>(
        nullptr,
        [this]() -> Result<std::unique_ptr<SpanStore>> {
          return std::unique_ptr<SpanStore>(std::make_unique<FlakyStore>(down_, written_, written_hook_));
        },
        "flaky", exporter_options, std::move(*spool));
  }

  static std::vector<Span> Batch(std::uint32_t first, std::uint32_t count) {
    std::vector<Span> spans;
    for (std::uint32_t i = first; i < first + count; ++i) {
      spans.push_back(MakeSpan(1, i, 0, "span-" + std::to_string(i), kBase + i, kBase + i + 1));
    }
    return spans;
  }
  static SpanExporter::Clock::time_point Soon() {
    return SpanExporter::Clock::now() + std::chrono::seconds(5);
  }

  std::filesystem::path directory_;
  bool down_ = false;
  std::vector<std::string> written_;
  std::function<void()> written_hook_;  // runs after each successful store write
};

TEST_F(StoreSpanExporterTest, SpansWaitInTheSpoolWhileTheStoreIsDownAndArriveInOrder) {
  auto exporter = Exporter(1 << 20);
  down_ = true;
  EXPECT_TRUE(exporter->Export(Batch(1, 3), Soon()).ok());
  EXPECT_TRUE(exporter->Export(Batch(4, 2), Soon()).ok());
  EXPECT_TRUE(written_.empty());
  EXPECT_EQ(exporter->counters().spans_spooled, 5u);
  EXPECT_GT(exporter->counters().spool_bytes, 0u);

  down_ = false;
  // A new batch queues behind the spooled ones: the store gets spans in the order they ended.
  EXPECT_TRUE(exporter->Export(Batch(6, 1), Soon()).ok());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1", "span-2", "span-3", "span-4", "span-5", "span-6"}));
  EXPECT_EQ(exporter->counters().spool_bytes, 0u);
  EXPECT_EQ(exporter->counters().spans_dropped_spool_full, 0u);
}

TEST_F(StoreSpanExporterTest, AnIdleExporterDrainsTheSpoolWhenTheStoreIsBack) {
  auto exporter = Exporter(1 << 20);
  down_ = true;
  ASSERT_TRUE(exporter->Export(Batch(1, 2), Soon()).ok());
  exporter->Idle(Soon());
  EXPECT_TRUE(written_.empty());
  down_ = false;
  exporter->Idle(Soon());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1", "span-2"}));
  EXPECT_EQ(exporter->counters().spool_bytes, 0u);
}

TEST_F(StoreSpanExporterTest, SpooledSpansSurviveARestartOfTheProcess) {
  down_ = true;
  {
    auto exporter = Exporter(1 << 20);
    ASSERT_TRUE(exporter->Export(Batch(1, 2), Soon()).ok());
  }
  down_ = false;
  auto restarted = Exporter(1 << 20);
  restarted->Idle(Soon());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1", "span-2"}));
}

// A burst the store cannot keep up with: while the pipeline's queue is more than a quarter full,
// batches go to the spool (the queue empties faster), and the spool drains, in order, once it is not.
TEST_F(StoreSpanExporterTest, ABacklogGoesToTheSpoolAndDrainsInOrderAfterwards) {
  auto exporter = Exporter(1 << 20);
  BacklogGauge queue(8192);
  exporter->WatchBacklog(queue);
  queue.Taken(6000);
  ASSERT_TRUE(exporter->Export(Batch(1, 2), Soon()).ok());
  queue.Taken(2100);
  ASSERT_TRUE(exporter->Export(Batch(3, 1), Soon()).ok());
  EXPECT_TRUE(written_.empty()) << "the store is up, but the queue came first";
  EXPECT_EQ(exporter->counters().spans_spooled, 3u);

  queue.Taken(100);
  ASSERT_TRUE(exporter->Export(Batch(4, 1), Soon()).ok());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1", "span-2", "span-3", "span-4"}));
  EXPECT_EQ(exporter->counters().spool_bytes, 0u);
}

// The queue fills again while the spool drains: the drain stops before the next spooled batch, and
// what is left waits for the queue to go down (a whole drain slice at a burst's rate would overflow
// the queue).
TEST_F(StoreSpanExporterTest, TheDrainStopsAsSoonAsTheQueueFillsAgain) {
  auto exporter = Exporter(1 << 20);
  BacklogGauge queue(8192);
  exporter->WatchBacklog(queue);
  down_ = true;
  ASSERT_TRUE(exporter->Export(Batch(1, 1), Soon()).ok());
  ASSERT_TRUE(exporter->Export(Batch(2, 1), Soon()).ok());
  ASSERT_TRUE(exporter->Export(Batch(3, 1), Soon()).ok());
  down_ = false;
  written_hook_ = [&] { queue.Taken(3000); };  // spans arrive while the first spooled batch is written
  exporter->Idle(Soon());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1"}));
  EXPECT_GT(exporter->counters().spool_bytes, 0u);

  written_hook_ = nullptr;
  queue.Taken(0);
  exporter->Idle(Soon());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-1", "span-2", "span-3"}));
  EXPECT_EQ(exporter->counters().spool_bytes, 0u);
}

// A batch the store refuses for its content must not hold every later batch in the spool: after a
// few tries it is dropped, counted, and the rest goes in.
TEST_F(StoreSpanExporterTest, ABatchTheStoreRefusesIsDroppedAfterAFewTriesAndTheRestFlows) {
  auto exporter = Exporter(1 << 20);
  down_ = true;
  std::vector<Span> poison = Batch(1, 2);
  poison[1].name = "poison";
  ASSERT_TRUE(exporter->Export(poison, Soon()).ok());
  ASSERT_TRUE(exporter->Export(Batch(3, 1), Soon()).ok());
  down_ = false;
  for (int i = 0; i < 3 && exporter->counters().spool_bytes > 0; ++i) exporter->Idle(Soon());
  EXPECT_EQ(written_, (std::vector<std::string>{"span-3"}));
  EXPECT_EQ(exporter->counters().spans_refused, 2u);
  EXPECT_EQ(exporter->counters().spool_bytes, 0u);
}

TEST_F(StoreSpanExporterTest, OnlyAFullSpoolDropsAndItIsCounted) {
  auto exporter = Exporter(1 << 20);
  down_ = true;
  std::vector<Span> big = Batch(1, 1);
  big[0].attributes = {{"payload", std::string(300 << 10, 'x')}};
  EXPECT_TRUE(exporter->Export(big, Soon()).ok());
  EXPECT_TRUE(exporter->Export(big, Soon()).ok());
  EXPECT_TRUE(exporter->Export(big, Soon()).ok());
  auto refused = exporter->Export(big, Soon());  // 4 x 300 KiB > 1 MiB
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("spool full"), std::string::npos) << refused.error().message;
  EXPECT_EQ(exporter->counters().spans_dropped_spool_full, 1u);
  EXPECT_EQ(exporter->counters().spans_spooled, 3u);
}

}  // namespace
}  // namespace sparktrace::tracing::store
