// The facts the trace view's cost model reads (tracing/span_vocabulary.h): executor cores on
// lifecycle spans, memory and driver settings as Spark sizes them, and the task time of the other
// operations of a shared Spark Connect server.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/executor_sharing.h"
#include "listener/correlate/resource_settings.h"
#include "listener/correlate/span_builder.h"
#include "tests/unit/diagnose/diagnose_test_lines.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tests/unit/listener/correlate/shared_server_test_log.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::listener::correlate {
namespace {

namespace lines = test_lines;
using tracing::Span;

constexpr std::int64_t kMiB = 1024 * 1024;
using test_lines::kOperationA;
using test_lines::kOperationB;
using test_lines::kSessionA;

std::optional<std::int64_t> IntOf(const std::vector<tracing::Attribute>& attributes, std::string_view key) {
  const auto* value = tracing::AttributeValueOf<std::int64_t>(attributes, key);
  return value == nullptr ? std::nullopt : std::optional<std::int64_t>(*value);
}

ApplicationModel ModelOf(const std::vector<std::string>& log) {
  ApplicationModel model;
  lines::Feed(model, log);
  return model;
}

TEST(ResourceSettings, SparkDefaultsWhenTheLogHasAConfigurationWithoutThem) {
  const ApplicationModel model =
      ModelOf({diagnose::test_lines::EnvironmentLine({{"spark.master", "k8s://x"}})});
  const std::optional<ResourceSettings> settings = ResourceSettingsOf(model);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->executor_memory_bytes, 1024 * kMiB);
  EXPECT_EQ(settings->executor_memory_overhead_bytes, 384 * kMiB);  // max(384 MiB, 10% of 1 GiB)
  EXPECT_EQ(settings->driver_cores, 1);
  EXPECT_EQ(settings->driver_memory_bytes, 1024 * kMiB);
  EXPECT_EQ(settings->driver_memory_overhead_bytes, 384 * kMiB);
}

TEST(ResourceSettings, ReadsMemoryOverheadAndFactorsAsSparkDoes) {
  const ApplicationModel model =
      ModelOf({diagnose::test_lines::EnvironmentLine({{"spark.executor.memory", "8g"},
                                                      {"spark.kubernetes.memoryOverheadFactor", "0.4"},
                                                      {"spark.driver.memory", "2048"},  // no suffix: MiB
                                                      {"spark.driver.memoryOverhead", "512m"},
                                                      {"spark.driver.cores", "3"}})});
  const std::optional<ResourceSettings> settings = ResourceSettingsOf(model);
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->executor_memory_bytes, 8192 * kMiB);
  EXPECT_EQ(settings->executor_memory_overhead_bytes, static_cast<std::int64_t>(0.4 * 8192 * kMiB));
  EXPECT_EQ(settings->driver_memory_bytes, 2048 * kMiB);
  EXPECT_EQ(settings->driver_memory_overhead_bytes, 512 * kMiB);
  EXPECT_EQ(settings->driver_cores, 3);
}

TEST(ResourceSettings, UnknownWithoutAConfigurationAndLocalModesDriverIsTheExecutor) {
  EXPECT_FALSE(ResourceSettingsOf(ModelOf({lines::AppStart("app-1", 0)})));
  EXPECT_TRUE(DriverIsExecutor(ModelOf({lines::ExecutorAdded("driver", 0)})));
  EXPECT_FALSE(DriverIsExecutor(ModelOf({lines::ExecutorAdded("1", 0)})));
}

TEST(ExecutorSharing, ProratesTheOtherOperationsStagesToTheWindow) {
  const ApplicationModel model = ModelOf(lines::SharedServerLog());
  // A's window 1000..9000 holds 3 s of B's 6 s stage (6000..12000): 3 s of B's task time.
  const ExecutorSharing a = SharingDuring(model, kOperationA, {1000, 9000}, 13000);
  EXPECT_EQ(a.others_run_time_ms, 3000);
  EXPECT_EQ(a.other_operations, 1);
  // B's window 5000..13000 holds none of A's stage (2000..4000).
  const ExecutorSharing b = SharingDuring(model, kOperationB, {5000, 13000}, 13000);
  EXPECT_EQ(b.others_run_time_ms, 0);
  EXPECT_EQ(b.other_operations, 0);
}

TEST(ResourceFacts, TheLifecycleSpanCarriesCoresMemoryDriverAndSharing) {
  const ApplicationModel model = ModelOf(lines::SharedServerLog());
  OperationSpanRef ref;
  ref.trace.fill(1);
  ref.parent.fill(2);
  const BuiltSpans built = BuildOperationSpans(model, kOperationA, ref, {});
  const Span* lifecycle = nullptr;
  for (const Span& span : built.spans) {
    if (span.name == "spark.connect.operation.lifecycle") lifecycle = &span;
  }
  ASSERT_NE(lifecycle, nullptr);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kExecutorsActiveAtStart), 1);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kExecutorCoresAtStart), 4);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kExecutorMemoryBytes), 4096 * kMiB);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kExecutorMemoryOverheadBytes),
            static_cast<std::int64_t>(0.1 * 4096 * kMiB));
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kDriverCores), 1);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kOthersRunTimeMs), 3000);
  EXPECT_EQ(IntOf(lifecycle->attributes, tracing::kOtherOperations), 1);
  // Executor 2 added at 3000 (8 cores alive) and removed at 7000 (4 again).
  std::vector<std::pair<std::string, std::int64_t>> changes;
  for (const tracing::SpanEvent& event : lifecycle->events) {
    if (const auto cores = IntOf(event.attributes, tracing::kExecutorCoresActive))
      changes.emplace_back(event.name, *cores);
  }
  const std::vector<std::pair<std::string, std::int64_t>> expected = {{"spark.executor.added", 8},
                                                                      {"spark.executor.removed", 4}};
  EXPECT_EQ(changes, expected);
}

}  // namespace
}  // namespace sparktrace::listener::correlate
