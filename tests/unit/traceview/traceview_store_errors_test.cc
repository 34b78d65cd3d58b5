// Issue 30, finding 4: the trace view checks every query value before its store is asked (a bad one
// is a 400 naming the parameter, never echoing it), answers a store failure with a generic 503 (the
// reason is the log's), and keeps its one store connection across failing requests unless the
// connection itself is lost.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/traceview/traceview_api_request.h"
#include "tests/unit/traceview/traceview_test_spans.h"
#include "traceview/query_values.h"
#include "traceview/trace_view_api.h"
#include "traceview/view_store.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

namespace fs = std::filesystem;
using tracing::store::SpanStore;

// --- query values -------------------------------------------------------------------------------

std::string QueryErrorOf(std::string_view query) {
  auto parsed = ParseTaskListQuery(query);
  return parsed.ok() ? std::string() : parsed.error().message;
}

TEST(TraceViewQueryValuesTest, ReadsEveryTaskListParameter) {
  auto parsed = ParseTaskListQuery(
      "dag=etl&task=..&state=failed&since=1764050400000&until=9223372036854&q=app-1%202&limit=200&offset=7&"
      "sort=-cost");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const auto& filter = parsed->filter;
  EXPECT_EQ(filter.dag_id, "etl");
  EXPECT_EQ(filter.task_id, "..");
  EXPECT_EQ(filter.state, "failed");
  EXPECT_EQ(filter.since_unix_nano, 1'764'050'400'000'000'000ULL);
  EXPECT_EQ(filter.until_unix_nano, 9'223'372'036'854'000'000ULL);  // the largest: still below 2^63
  EXPECT_EQ(filter.limit, 200u);
  EXPECT_EQ(filter.offset, 7u);
  EXPECT_EQ(filter.order, tracing::store::TaskAttemptOrder::kCostDescending);
  EXPECT_EQ(parsed->search, "app-1 2");
  // Empty values are absent (an empty form field), other parameters ignored.
  auto empty = ParseTaskListQuery("dag=&since=&q=&token=x&view=list");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->filter.dag_id);
  EXPECT_EQ(empty->filter.since_unix_nano, 0u);
  EXPECT_FALSE(empty->search);
}

TEST(TraceViewQueryValuesTest, EachBadValueNamesItsParameterWithoutEchoingIt) {
  const struct {
    std::string query;
    std::string expected;
  } cases[] = {
      {"dag=%ff", "dag must be 1 to 250 printable ASCII characters without spaces"},
      {"dag=a%20b", "dag must be"},
      {"task=%00", "task must be"},
      {"dag=" + std::string(251, 'd'), "dag must be"},
      {"since=9300000000000", "since must be epoch milliseconds from 0 to 9223372036854"},
      {"since=9223372036855", "since must be"},
      {"until=99999999999999999999999", "until must be"},
      {"since=-1", "since must be"},
      {"until=%2B5", "until must be"},
      {"since=1e3", "since must be"},
      {"state=sleeping", "state must be running, success or failed"},
      {"limit=0", "limit must be 1 to 200"},
      {"limit=201", "limit must be"},
      {"offset=-1", "offset must be"},
      {"offset=99999999999999999999", "offset must be"},
      {"sort=name", "sort must be -start, start, -cost or cost"},
      {"q=%ff%fe", "q must be 1 to 250 printable ASCII characters"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.query);
    const std::string message = QueryErrorOf(c.query);
    EXPECT_TRUE(message.starts_with(c.expected)) << message;
    const std::string value = c.query.substr(c.query.find('=') + 1);
    if (value.size() > 3) {
      EXPECT_EQ(message.find(value), std::string::npos) << message;
    }
  }
}

TEST(TraceViewQueryValuesTest, AddressIdsAreUtf8TextOfAirflowLength) {
  EXPECT_TRUE(CheckAddressId("run", "").ok());
  EXPECT_TRUE(CheckAddressId("run", "manual__2024-01-01T00:00:00+00:00/a?b=c#d 100% ü運🚀").ok());
  std::string longest;
  for (int i = 0; i < 250; ++i) longest += "運";
  EXPECT_TRUE(CheckAddressId("run", longest).ok());
  EXPECT_FALSE(CheckAddressId("run", longest + "a").ok());
  for (const std::string& bad :
       {std::string("\xff"), std::string("a\xc3"), std::string("\xc0\xaf"), std::string("\xe0\x80\xaf"),
        std::string("\xed\xa0\x80"), std::string("\xf4\x90\x80\x80"), std::string("a\0b", 3),
        std::string("\x80")}) {
    const auto checked = CheckAddressId("dag", bad);
    ASSERT_FALSE(checked.ok()) << testing::PrintToString(bad);
    EXPECT_EQ(checked.error().message, "dag must be UTF-8 text of at most 250 characters");
  }
}

TEST(TraceViewQueryValuesTest, TryAndMapFollowAirflowsRanges) {
  EXPECT_EQ(*ParseTryNumber("try", "0"), 0);
  EXPECT_EQ(*ParseTryNumber("try", "2147483647"), 2147483647);
  for (const char* bad : {"-1", "2147483648", "+1", "1.0", "", "x", "99999999999999999999"}) {
    EXPECT_FALSE(ParseTryNumber("try", bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseMapIndex("map", "-1"), -1);
  EXPECT_EQ(*ParseMapIndex("map", "3"), 3);
  for (const char* bad : {"-2", "2147483648", "x"}) EXPECT_FALSE(ParseMapIndex("map", bad).ok()) << bad;
  EXPECT_EQ(ParseMapIndex("map", "x").error().message, "map must be -1 or an integer from 0 to 2147483647");
}

// --- the failure log ----------------------------------------------------------------------------

TEST(TraceViewStoreFailureLogTest, LogsEachNewReasonOnceAndRepeatsAtMostOncePerMinute) {
  StoreFailureLog log;
  const auto start = StoreFailureLog::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_TRUE(log.Note("connection refused", start));
  int logged = 0;
  for (int i = 1; i <= 100; ++i)
    logged += log.Note("connection refused", start + std::chrono::milliseconds(i)) ? 1 : 0;
  EXPECT_EQ(logged, 0);
  EXPECT_TRUE(log.Note("connection refused", start + std::chrono::seconds(61)));
  EXPECT_TRUE(log.Note("server closed the connection", start + std::chrono::seconds(63)));
  // Reasons that keep changing are held back too: at most one new one a second.
  EXPECT_FALSE(log.Note("a third reason", start + std::chrono::milliseconds(63'100)));
  EXPECT_TRUE(log.Note("a third reason", start + std::chrono::seconds(65)));
}

// --- the store connection -----------------------------------------------------------------------

// A store whose every read fails with `failure`, its connection lost or not as the test says.
class FailingViewStoreFake final : public SpanStore {
 public:
  FailingViewStoreFake(Error failure, const bool* lost) : failure_(std::move(failure)), lost_(lost) {}
  Result<tracing::store::WriteStats> Write(std::span<const tracing::Span>) override { return failure_; }
  Result<std::vector<tracing::TraceSummary>> ListTraces(const tracing::store::TraceFilter&) override {
    return failure_;
  }
  Result<std::vector<tracing::Span>> GetTrace(const tracing::TraceId&) override { return failure_; }
  Result<tracing::TraceId> FindTraceByOperation(std::string_view) override { return failure_; }
  Result<tracing::store::TaskAttemptPage> ListTaskAttempts(
      const tracing::store::TaskAttemptFilter&) override {
    return failure_;
  }
  Result<std::vector<std::string>> TracesMatching(std::string_view) override { return failure_; }
  Result<tracing::store::DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point,
                                                      std::chrono::milliseconds, std::size_t) override {
    return failure_;
  }
  Result<tracing::store::SettleClaim> RecordSettlement(const tracing::store::AttemptRef&, std::uint64_t,
                                                       const tracing::store::SettledFigures&) override {
    return failure_;
  }
  Result<tracing::store::RetentionStats> EnforceRetention(std::chrono::system_clock::time_point) override {
    return failure_;
  }
  bool connection_lost() const override { return *lost_; }
  const std::string& description() const override { return description_; }
  bool read_only() const override { return true; }

 private:
  Error failure_;
  const bool* lost_;
  std::string description_ = "postgresql://reader:***@db.internal:5432/traces";
};

constexpr const char* kFakeLibpqText =
    "query on postgresql://reader:***@db.internal:5432/traces: ERROR:  invalid byte sequence for encoding "
    "\"UTF8\": 0xff";

class TraceViewStoreErrorsTest : public ::testing::Test {
 protected:
  TraceViewApi& ApiOverFake(ErrorCode code) {
    TraceViewOptions options;
    options.open_store = [this, code]() -> Result<std::unique_ptr<SpanStore>> {
      ++opened_;
      return std::unique_ptr<SpanStore>(
          std::make_unique<FailingViewStoreFake>(Error{code, kFakeLibpqText}, &lost_));
    };
    api_ = std::make_unique<TraceViewApi>(std::move(options));
    return *api_;
  }

  admin::HttpResponse Get(const std::string& path, const std::string& query = "") {
    return traceview_test::GetFrom(*api_, path, query);
  }

  double Metric(const std::string& name) {
    for (const auto& family : api_->metrics()->Collect()) {
      if (family.name != name) continue;
      const auto& metric = family.metric.at(0);
      return family.type == prometheus::MetricType::Gauge ? metric.gauge.value : metric.counter.value;
    }
    ADD_FAILURE() << "no metric " << name;
    return -1;
  }

  bool lost_ = false;
  int opened_ = 0;
  std::unique_ptr<TraceViewApi> api_;
};

TEST_F(TraceViewStoreErrorsTest, AStoreFailureIsAGeneric503) {
  ApiOverFake(ErrorCode::kInternal);
  for (const auto& [path, query] : {std::pair{"/api/v1/tasks", ""},
                                    {"/api/v1/tasks", "q=app-1"},
                                    {"/api/v1/attempt", "dag=etl&task=load&run=r&try=1"},
                                    {"/api/v1/traces/4bf92f3577b34da6a3ce929d0e0e4736", ""}}) {
    SCOPED_TRACE(std::string(path) + "?" + query);
    const auto response = Get(path, query);
    EXPECT_EQ(response.status, 503);
    EXPECT_EQ(nlohmann::json::parse(response.body)["error"], "the trace store cannot be read now");
    for (const char* secret : {"postgresql", "db.internal", "reader", "traces:", "UTF8", "ERROR"}) {
      EXPECT_EQ(response.body.find(secret), std::string::npos) << secret << " in " << response.body;
    }
  }
  EXPECT_EQ(Metric("sparktrace_trace_view_store_errors_total"), 4);
}

TEST_F(TraceViewStoreErrorsTest, FailingRequestsOnAHealthyConnectionReuseIt) {
  ApiOverFake(ErrorCode::kUnavailable);
  for (int i = 0; i < 100; ++i) ASSERT_EQ(Get("/api/v1/tasks").status, 503);
  EXPECT_EQ(opened_, 1);  // was 100: the connection was dropped on every 503
  EXPECT_EQ(Metric("sparktrace_trace_view_store_connects_total"), 1);
  EXPECT_EQ(Metric("sparktrace_trace_view_store_connections"), 1);
}

TEST_F(TraceViewStoreErrorsTest, OnlyALostConnectionIsReplaced) {
  ApiOverFake(ErrorCode::kUnavailable);
  EXPECT_EQ(Get("/api/v1/tasks").status, 503);
  lost_ = true;
  EXPECT_EQ(Get("/api/v1/tasks").status, 503);  // this one finds it lost: dropped
  EXPECT_EQ(Metric("sparktrace_trace_view_store_connections"), 0);
  lost_ = false;
  EXPECT_EQ(Get("/api/v1/tasks").status, 503);  // a new one, kept again
  EXPECT_EQ(Get("/api/v1/tasks").status, 503);
  EXPECT_EQ(opened_, 2);
  EXPECT_EQ(Metric("sparktrace_trace_view_store_connects_total"), 2);
}

TEST_F(TraceViewStoreErrorsTest, BadValuesNeverReachTheStore) {
  ApiOverFake(ErrorCode::kInternal);
  for (const auto& [path, query, parameter] :
       {std::tuple{"/api/v1/tasks", "dag=%ff", "dag"},
        {"/api/v1/tasks", "since=9300000000000", "since"},
        {"/api/v1/tasks", "until=9300000000000", "until"},
        {"/api/v1/tasks", "q=%ff", "q"},
        {"/api/v1/attempt", "dag=%ff&task=load&run=r&try=1", "dag"},
        {"/api/v1/attempt", "dag=etl&task=load&run=%c0%af&try=1", "run"},
        {"/api/v1/attempt", "dag=etl&task=load&run=r&try=99999999999", "try"},
        {"/api/v1/tasks/etl/%ff/r/1", "", "task"},
        {"/api/v1/tasks/etl/load/r/1", "map_index=-7", "map_index"}}) {
    SCOPED_TRACE(std::string(path) + "?" + query);
    const auto response = Get(path, query);
    EXPECT_EQ(response.status, 400);
    const std::string error = nlohmann::json::parse(response.body)["error"];
    EXPECT_TRUE(error.starts_with(std::string(parameter) + " must be")) << error;
  }
  EXPECT_EQ(opened_, 0);
}

TEST(TraceViewStoreReopenTest, AStoreThatCannotBeOpenedIsTriedAgainAtMostOnceASecond) {
  int attempts = 0;
  ViewStore store([&attempts]() -> Result<std::unique_ptr<SpanStore>> {
    ++attempts;
    return Error{ErrorCode::kUnavailable, "connect to postgresql://db.internal/traces: connection refused"};
  });
  const auto start = ViewStore::Clock::time_point{} + std::chrono::hours(1);
  EXPECT_FALSE(store.Get(start).ok());
  for (int i = 1; i < 100; ++i) EXPECT_FALSE(store.Get(start + std::chrono::milliseconds(i * 9)).ok());
  EXPECT_EQ(attempts, 1);
  EXPECT_FALSE(store.Get(start + kReopenBackoff).ok());
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(store.metrics()->connects(), 2u);
}

// On SQLite an overflowing `since` wrapped around and listed every attempt (9,300,000,000,000 ms x
// 10^6 is past 2^64); now it is refused before the store is asked.
TEST(TraceViewSqliteOverflowTest, AnOverflowingSinceIsRefusedNotWrapped) {
  const fs::path dir = fs::temp_directory_path() / ("sparktrace-store-errors-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "traces.db").string();
  {
    auto writer = tracing::store::SqliteSpanStore::Open(path);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    ASSERT_TRUE((*writer)->Write(traceview_test::Operation(1, 10, 0, 0, "etl", "load", "run-1", 1)).ok());
  }
  TraceViewApi api(TraceViewOptions{tracing::store::SqliteAt(path)});
  EXPECT_EQ(nlohmann::json::parse(traceview_test::GetFrom(api, "/api/v1/tasks", "since=1").body)["total"], 1);
  const auto response = traceview_test::GetFrom(api, "/api/v1/tasks", "since=9300000000000");
  EXPECT_EQ(response.status, 400) << response.body;
  EXPECT_EQ(nlohmann::json::parse(response.body)["error"],
            "since must be epoch milliseconds from 0 to 9223372036854");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sparktrace::traceview
