// Late events through the real trace store: spans built again after more driver events arrive
// replace the stored ones (same trace and span ids) instead of adding duplicates, and stay under
// the proxy's operation span.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "listener/correlate/application_model.h"
#include "listener/correlate/span_builder.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::listener::correlate {
namespace {

namespace fs = std::filesystem;
namespace lines = test_lines;

using test_lines::kOperationA;
using test_lines::kSessionA;

class ListenerCorrelateStore : public testing::Test {
 protected:
  void SetUp() override {
    directory_ =
        fs::path(testing::TempDir()) / ("sparktrace_correlate_" + std::to_string(::getpid()) + "_" +
                                        testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  fs::path directory_;
};

TEST_F(ListenerCorrelateStore, RebuiltSpansReplaceTheStoredOnes) {
  auto opened = tracing::store::SqliteSpanStore::Open((directory_ / "traces.db").string());
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  tracing::store::SqliteSpanStore& store = **opened;

  // The proxy's operation span, as the proxy would have stored it.
  OperationSpanRef ref;
  ref.trace.fill(0x42);
  ref.parent.fill(0x07);
  tracing::Span operation_span;
  operation_span.trace_id = ref.trace;
  operation_span.span_id = ref.parent;
  operation_span.name = "spark.connect.operation";
  operation_span.start_time_unix_nano = 1999ULL * 1'000'000;
  operation_span.end_time_unix_nano = 2500ULL * 1'000'000;
  ASSERT_TRUE(store.Write(std::vector<tracing::Span>{operation_span}).ok());

  const std::string tag = lines::OperationTag("alice", kSessionA, kOperationA);
  ApplicationModel model;
  lines::Feed(model,
              {lines::LogStart("4.0.0"), lines::AppStart("app-store", 1000), lines::ExecutorAdded("1", 1000),
               lines::ConnectOperation("Started", tag, kOperationA, 2000, kSessionA, "alice"),
               lines::JobStart(0, 2010, {0}, {tag}), lines::StageSubmitted(0, 2011, 1),
               lines::ConnectOperation("Canceled", tag, kOperationA, 2100)});
  const BuiltSpans first = BuildOperationSpans(model, kOperationA, ref);
  ASSERT_TRUE(store.Write(first.spans).ok());

  // The cancelled job winds down after the operation ended (and after the proxy's span ended).
  lines::Feed(model, {lines::TaskEnd(0, 1, 2020, 2300), lines::StageCompleted(0, 2011, 2310, 1),
                      lines::JobEnd(0, 2311, /*succeeded=*/false),
                      lines::ConnectOperation("Closed", tag, kOperationA, 2320)});
  const BuiltSpans second = BuildOperationSpans(model, kOperationA, ref);
  ASSERT_TRUE(store.Write(second.spans).ok());

  auto trace = store.GetTrace(ref.trace);
  ASSERT_TRUE(trace.ok()) << trace.error().ToString();
  int jobs = 0;
  int stages = 0;
  for (const tracing::Span& span : *trace) {
    if (span.name == "spark.job") {
      ++jobs;
      EXPECT_EQ(span.parent_span_id, ref.parent);
      EXPECT_EQ(span.end_time_unix_nano, 2311ULL * 1'000'000);
      EXPECT_EQ(span.status_code, tracing::StatusCode::kError);
    }
    if (span.name == "spark.stage") ++stages;
  }
  EXPECT_EQ(jobs, 1);
  EXPECT_EQ(stages, 1);
  // Everything built the second time plus the proxy's own span: the first build's spans all had
  // their ids reused (its phases were idle, compute; the second's idle, compute, idle).
  EXPECT_EQ(trace->size(), second.spans.size() + 1);

  auto found = store.FindTraceByOperation(kOperationA);
  ASSERT_TRUE(found.ok()) << found.error().ToString();
  EXPECT_EQ(*found, ref.trace);
}

}  // namespace
}  // namespace sparktrace::listener::correlate
