#include "tracing/span_pipeline.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>

namespace sparktrace::tracing {
namespace {

// Records batches; can be held (blocks in Export until released) to play a stuck collector.
class FakeExporter final : public SpanExporter {
 public:
  struct State {
    std::mutex mu;
    std::condition_variable changed;
    std::vector<std::size_t> batch_sizes;
    std::size_t spans = 0;
    bool hold = false;
    bool fail = false;
    bool shut_down = false;
  };
  explicit FakeExporter(std::shared_ptr<State> state) : state_(std::move(state)) {}

  Result<void> Export(std::span<const Span> spans, Clock::time_point) override {
    std::unique_lock lock(state_->mu);
    state_->changed.wait(lock, [&] { return !state_->hold || state_->shut_down; });
    state_->batch_sizes.push_back(spans.size());
    state_->spans += spans.size();
    state_->changed.notify_all();
    if (state_->fail || state_->shut_down) return Error{ErrorCode::kUnavailable, "collector down"};
    return {};
  }
  void Shutdown() override {
    std::lock_guard lock(state_->mu);
    state_->shut_down = true;
    state_->changed.notify_all();
  }
  SpanExporterCounters counters() const override { return {}; }

 private:
  std::shared_ptr<State> state_;
};

Span MakeSpan(std::uint8_t n) {
  Span span;
  span.trace_id[15] = 1;
  span.span_id[7] = n == 0 ? 1 : n;
  span.name = "span";
  return span;
}

TEST(SpanPipeline, ExportsEverythingInBoundedBatches) {
  auto state = std::make_shared<FakeExporter::State>();
  SpanPipelineOptions options;
  options.max_batch_spans = 10;
  options.batch_delay = std::chrono::hours(1);  // only full batches and the flush trigger exports
  SpanPipeline pipeline("test", std::make_unique<FakeExporter>(state), options);
  for (int i = 0; i < 95; ++i) pipeline.Submit(MakeSpan(static_cast<std::uint8_t>(i)));
  ASSERT_TRUE(pipeline.Flush(std::chrono::seconds(10)));
  std::lock_guard lock(state->mu);
  EXPECT_EQ(state->spans, 95u);
  for (std::size_t size : state->batch_sizes) EXPECT_LE(size, 10u);
  EXPECT_EQ(pipeline.counters().exported, 95u);
  EXPECT_EQ(pipeline.counters().dropped_queue_full, 0u);
}

TEST(SpanPipeline, ExportsALoneSpanAfterTheBatchDelay) {
  auto state = std::make_shared<FakeExporter::State>();
  SpanPipelineOptions options;
  options.batch_delay = std::chrono::milliseconds(20);
  SpanPipeline pipeline("test", std::make_unique<FakeExporter>(state), options);
  pipeline.Submit(MakeSpan(1));
  std::unique_lock lock(state->mu);
  EXPECT_TRUE(state->changed.wait_for(lock, std::chrono::seconds(10), [&] { return state->spans == 1; }))
      << "a single span must not wait for a full batch";
}

TEST(SpanPipeline, DropsAndCountsInsteadOfBlockingWhenTheExporterIsStuck) {
  auto state = std::make_shared<FakeExporter::State>();
  state->hold = true;
  SpanPipelineOptions options;
  options.max_queue_spans = 50;
  options.max_batch_spans = 10;
  options.shutdown_timeout = std::chrono::milliseconds(100);
  SpanPipeline pipeline("test", std::make_unique<FakeExporter>(state), options);
  // The exporter thread takes the first batch and then blocks in Export; the queue fills up.
  for (int i = 0; i < 10; ++i) pipeline.Submit(MakeSpan(1));
  // Submitting far more than the queue holds returns at once: a blocked Submit would hang here.
  for (int i = 0; i < 500; ++i) pipeline.Submit(MakeSpan(2));
  const auto counters = pipeline.counters();
  EXPECT_EQ(counters.submitted + counters.dropped_queue_full, 510u);
  EXPECT_GE(counters.dropped_queue_full, 500u - 50u);
  pipeline.Shutdown();  // gives up after shutdown_timeout and cuts the stuck export short
  EXPECT_GT(pipeline.counters().export_failed, 0u);
  pipeline.Submit(MakeSpan(3));
  EXPECT_EQ(pipeline.counters().dropped_after_shutdown, 1u);
}

TEST(SpanPipeline, ShutdownExportsWhatIsQueued) {
  auto state = std::make_shared<FakeExporter::State>();
  SpanPipelineOptions options;
  options.batch_delay = std::chrono::hours(1);
  options.max_batch_spans = 1000;
  {
    SpanPipeline pipeline("test", std::make_unique<FakeExporter>(state), options);
    for (int i = 0; i < 7; ++i) pipeline.Submit(MakeSpan(static_cast<std::uint8_t>(i)));
  }  // the destructor shuts down
  std::lock_guard lock(state->mu);
  EXPECT_EQ(state->spans, 7u);
}

TEST(SpanPipeline, FailedExportsAreCountedNotRetriedForever) {
  auto state = std::make_shared<FakeExporter::State>();
  state->fail = true;
  SpanPipeline pipeline("test", std::make_unique<FakeExporter>(state), SpanPipelineOptions{});
  for (int i = 0; i < 3; ++i) pipeline.Submit(MakeSpan(1));
  ASSERT_TRUE(pipeline.Flush(std::chrono::seconds(10)));
  EXPECT_EQ(pipeline.counters().export_failed, 3u);
  EXPECT_EQ(pipeline.counters().exported, 0u);
}

}  // namespace
}  // namespace sparktrace::tracing
