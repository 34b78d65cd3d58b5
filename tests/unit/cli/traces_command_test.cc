#include "cli/traces_command.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "tracing/span_vocabulary.h"
#include "tracing/store/export/store_span_exporter.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::cli {
namespace {

using tracing::Span;

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run Traces(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunTracesCommand(args, out, err);
  return {code, out.str(), err.str()};
}

class TracesCommandTest : public testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TempDir() + "/traces_command_" +
            testing::UnitTest::GetInstance()->current_test_info()->name() + ".db";
    std::remove(path_.c_str());
    auto store = tracing::store::SqliteSpanStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    // Written through the pipeline's SQLite sink, as the proxy will.
    tracing::store::StoreSpanExporter exporter(std::move(*store), nullptr, path_);
    // Recent times: the exporter applies retention (7 days by default) on its first batch.
    const auto now = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    std::chrono::system_clock::now().time_since_epoch())
                                                    .count());
    Span root = MakeSpan(1, 0, "spark_connect.operation", now - 3'000'000'000, now - 500'000'000);
    root.attributes.push_back({std::string(tracing::kSparkConnectOperationIdKey), std::string("op-123")});
    root.attributes.push_back({std::string(tracing::kAirflowDagIdKey), std::string("daily_sales")});
    root.attributes.push_back({std::string(tracing::kAirflowTaskIdKey), std::string("aggregate")});
    Span child = MakeSpan(2, 1, "spark.connect.SparkConnectService/ExecutePlan", now - 2'900'000'000,
                          now - 600'000'000);
    const std::vector<Span> spans = {root, child};
    ASSERT_TRUE(exporter.Export(spans, tracing::SpanExporter::Clock::now()).ok());
  }

  static Span MakeSpan(std::uint8_t id, std::uint8_t parent, std::string name, std::uint64_t start,
                       std::uint64_t end) {
    Span span;
    span.trace_id = kTraceId;
    span.span_id[7] = id;
    span.parent_span_id[7] = parent;
    span.name = std::move(name);
    span.start_time_unix_nano = start;
    span.end_time_unix_nano = end;
    return span;
  }

  static constexpr tracing::TraceId kTraceId = {0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6,
                                                0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36};
  static constexpr const char* kTraceHex = "4bf92f3577b34da6a3ce929d0e0e4736";
  std::string path_;
};

TEST_F(TracesCommandTest, ListShowsTheTraceAndFiltersByAirflowTask) {
  auto all = Traces({"list", "--store", path_});
  ASSERT_EQ(all.code, 0) << all.err;
  EXPECT_NE(all.out.find(kTraceHex), std::string::npos) << all.out;
  auto mine = Traces({"list", "--store", path_, "--dag", "daily_sales", "--task", "aggregate"});
  EXPECT_NE(mine.out.find(kTraceHex), std::string::npos) << mine.out;
  auto other = Traces({"list", "--store", path_, "--dag", "another_dag"});
  ASSERT_EQ(other.code, 0);
  EXPECT_EQ(other.out.find(kTraceHex), std::string::npos) << other.out;
  auto json = Traces({"list", "--store", path_, "--json"});
  EXPECT_NE(json.out.find("\"attempts\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"daily_sales.aggregate\""), std::string::npos) << json.out;
}

// Airflow 2.10 gives every task of a DAG run one trace id: each task attempt is its own row, found
// by its own filters (one row per trace used to mix both tasks' identities and find neither).
TEST_F(TracesCommandTest, ListFindsEachAttemptOfASharedTrace) {
  {
    auto store = tracing::store::SqliteSpanStore::Open(path_);
    ASSERT_TRUE(store.ok()) << store.error().message;
    Span other = MakeSpan(3, 0, "spark_connect.operation", 1'000'000'000, 2'000'000'000);
    other.attributes = {{std::string(tracing::kAirflowDagIdKey), std::string("daily_sales")},
                        {std::string(tracing::kAirflowTaskIdKey), std::string("publish")},
                        {std::string(tracing::kAirflowTryNumberKey), std::int64_t{2}}};
    ASSERT_TRUE((*store)->Write(std::vector<Span>{other}).ok());
  }
  auto publish = Traces({"list", "--store", path_, "--task", "publish"});
  ASSERT_EQ(publish.code, 0) << publish.err;
  EXPECT_NE(publish.out.find("daily_sales.publish"), std::string::npos) << publish.out;
  EXPECT_NE(publish.out.find(kTraceHex), std::string::npos) << publish.out;
  EXPECT_EQ(publish.out.find("daily_sales.aggregate"), std::string::npos) << publish.out;
  auto second_try = Traces({"list", "--store", path_, "--task", "publish", "--try", "2", "--json"});
  EXPECT_NE(second_try.out.find("\"try_number\": 2"), std::string::npos) << second_try.out;
  auto first_try = Traces({"list", "--store", path_, "--task", "publish", "--try", "1"});
  EXPECT_EQ(first_try.out, "no task attempts\n");
  auto aggregate = Traces({"list", "--store", path_, "--task", "aggregate"});
  EXPECT_NE(aggregate.out.find("daily_sales.aggregate"), std::string::npos) << aggregate.out;
  EXPECT_EQ(aggregate.out.find("daily_sales.publish"), std::string::npos) << aggregate.out;
  EXPECT_EQ(Traces({"list", "--store", path_, "--try", "first"}).code, 2);
}

TEST_F(TracesCommandTest, ShowPrintsTheTreeByTraceOrOperationId) {
  auto by_trace = Traces({"show", kTraceHex, "--store", path_});
  ASSERT_EQ(by_trace.code, 0) << by_trace.err;
  EXPECT_NE(by_trace.out.find("spark_connect.operation"), std::string::npos) << by_trace.out;
  EXPECT_NE(by_trace.out.find("ExecutePlan"), std::string::npos) << by_trace.out;
  auto by_operation = Traces({"show", "--operation", "op-123", "--store", path_});
  ASSERT_EQ(by_operation.code, 0) << by_operation.err;
  EXPECT_EQ(by_operation.out, by_trace.out);
}

TEST_F(TracesCommandTest, ErrorsAreClearWithTheRightExitCode) {
  EXPECT_EQ(Traces({"show", "not-a-trace-id", "--store", path_}).code, 2);
  EXPECT_EQ(Traces({"show", "--store", path_}).code, 2);
  EXPECT_EQ(Traces({"frobnicate"}).code, 2);
  EXPECT_EQ(Traces({"list", "--limit", "many", "--store", path_}).code, 2);
  auto unknown = Traces({"show", "0000000000000000000000000000000a", "--store", path_});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_FALSE(unknown.err.empty());
  auto missing = Traces({"list", "--store", testing::TempDir() + "/no/such/dir/x.db"});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("x.db"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace sparktrace::cli
