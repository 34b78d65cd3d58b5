// The Chrome trace-event download (traceview/chrome_trace.h), parsed back: valid JSON, no two
// complete events of one track overlap or nest, one name per track, the executor counter.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/unit/traceview/traceview_span_builders.h"
#include "traceview/chrome_trace.h"
#include "traceview/executor_series.h"
#include "tracing/span.h"

namespace sparktrace::traceview {
namespace {

using Json = nlohmann::json;
using traceview_test::kOriginMs;
using traceview_test::MakeSpan;

// Operations 1 [0,100] and 2 [10,20] (nested in time), 3 [100,150] (touches 1); jobs 4 [10,50],
// 5 [20,60], 6 [30,40] (three at once at 30), 7 [60,70]; an RPC; a client span.
std::vector<tracing::Span> Attempt() {
  std::vector<tracing::Span> spans = {
      MakeSpan("spark_connect.operation", 1, 0, 0, 100),
      MakeSpan("spark_connect.operation", 2, 0, 10, 20),
      MakeSpan("spark_connect.operation", 3, 0, 100, 150),
      MakeSpan("spark.job", 4, 1, 10, 50),
      MakeSpan("spark.job", 5, 1, 20, 60),
      MakeSpan("spark.job", 6, 1, 30, 40),
      MakeSpan("spark.job", 7, 1, 60, 70),
      MakeSpan("spark.connect.SparkConnectService/ExecutePlan", 8, 1, 0, 100),
      MakeSpan("my.client.work", 9, 0, 150, 160),
  };
  spans[0].attributes.push_back({"spark.connect.operation_id", std::string("0924ae17-aaaa")});
  spans[0].attributes.push_back({"spark.connect.plan_kind", std::string("root")});
  spans[3].attributes.push_back({"spark.job.id", std::int64_t{12}});
  spans[3].status_code = tracing::StatusCode::kError;
  spans[3].status_message = "stage failed";
  return spans;
}

ExecutorSeries TwoSteps() {
  ExecutorSeries series;
  series.known = true;
  series.max = 3;
  series.points = {{static_cast<double>(kOriginMs), 1},
                   {static_cast<double>(kOriginMs + 30), 3},
                   {static_cast<double>(kOriginMs + 160), 3}};
  return series;
}

std::vector<Json> EventsOf(const Json& trace, const std::string& phase) {
  std::vector<Json> events;
  for (const Json& event : trace.at("traceEvents")) {
    if (event.at("ph") == phase) events.push_back(event);
  }
  return events;
}

TEST(TraceviewChromeTraceTest, ValidJsonWithCompleteEventsPerSpan) {
  const std::vector<tracing::Span> spans = Attempt();
  const Json trace = Json::parse(ChromeTraceJson(spans, TwoSteps(), "etl.load manual__1 try 1"));
  EXPECT_EQ(trace.at("displayTimeUnit"), "ms");
  EXPECT_EQ(trace.at("otherData").at("title"), "etl.load manual__1 try 1");
  const std::vector<Json> complete = EventsOf(trace, "X");
  ASSERT_EQ(complete.size(), spans.size());
  // Earliest start first: operation 1 at ts 0, 100 ms = 100,000 µs long.
  const Json& first = complete.front();
  EXPECT_EQ(first.at("ts"), 0);
  EXPECT_EQ(first.at("pid"), 1);
  std::set<std::string> names;
  for (const Json& event : complete) names.insert(event.at("name").get<std::string>());
  EXPECT_TRUE(names.contains("query 0924ae17"));
  EXPECT_TRUE(names.contains("job 12"));
  EXPECT_TRUE(names.contains("ExecutePlan"));
  for (const Json& event : complete) {
    if (event.at("name") != "job 12") continue;
    EXPECT_EQ(event.at("cat"), "job");
    EXPECT_EQ(event.at("ts"), 10'000);
    EXPECT_EQ(event.at("dur"), 40'000);
    EXPECT_EQ(event.at("args").at("span_id"), "0000000000000004");
    EXPECT_EQ(event.at("args").at("parent_id"), "0000000000000001");
    EXPECT_EQ(event.at("args").at("status"), "error");
    EXPECT_EQ(event.at("args").at("status_message"), "stage failed");
    EXPECT_EQ(event.at("args").at("spark.job.id"), 12);
  }
}

TEST(TraceviewChromeTraceTest, NoTwoEventsOfATrackOverlapOrNest) {
  const std::vector<tracing::Span> spans = Attempt();
  const Json trace = Json::parse(ChromeTraceJson(spans, ExecutorSeries{}, "t"));
  std::map<int, std::vector<std::pair<std::int64_t, std::int64_t>>> by_tid;
  std::map<int, std::set<std::string>> lanes_of_tid;
  for (const Json& event : EventsOf(trace, "X")) {
    const std::int64_t ts = event.at("ts");
    by_tid[event.at("tid")].emplace_back(ts, ts + event.at("dur").get<std::int64_t>());
    lanes_of_tid[event.at("tid")].insert(event.at("cat").get<std::string>());
  }
  for (auto& [tid, intervals] : by_tid) {
    std::sort(intervals.begin(), intervals.end());
    for (std::size_t i = 1; i < intervals.size(); ++i) {
      EXPECT_LE(intervals[i - 1].second, intervals[i].first) << "tid " << tid;
    }
    EXPECT_EQ(lanes_of_tid[tid].size(), 1u) << "one lane per track, tid " << tid;
  }
  // Operations: 1 and 3 touch (one track), 2 lies inside 1 → 2 tracks. Jobs: three at once → 3.
  // Plus one RPC track and one other: 2 + 3 + 1 + 1 tracks.
  EXPECT_EQ(by_tid.size(), 7u);
}

TEST(TraceviewChromeTraceTest, OneNameAndSortIndexPerTrackInLaneOrder) {
  const Json trace = Json::parse(ChromeTraceJson(Attempt(), ExecutorSeries{}, "t"));
  std::map<int, std::string> names;
  std::map<int, int> sort_index;
  for (const Json& event : EventsOf(trace, "M")) {
    if (event.at("name") == "thread_name") {
      EXPECT_TRUE(names.emplace(event.at("tid"), event.at("args").at("name")).second) << "one name per tid";
    }
    if (event.at("name") == "thread_sort_index")
      sort_index.emplace(event.at("tid"), event.at("args").at("sort_index"));
  }
  for (const Json& event : EventsOf(trace, "X")) EXPECT_TRUE(names.contains(event.at("tid")));
  const std::vector<std::string> in_order = {"rpcs",    "operations", "operations #2", "jobs",
                                             "jobs #2", "jobs #3",    "other"};
  std::vector<std::pair<int, std::string>> by_sort;
  by_sort.reserve(names.size());
  for (const auto& [tid, name] : names) by_sort.emplace_back(sort_index.at(tid), name);
  std::sort(by_sort.begin(), by_sort.end());
  std::vector<std::string> sorted_names;
  sorted_names.reserve(by_sort.size());
  for (const auto& entry : by_sort) sorted_names.push_back(entry.second);
  EXPECT_EQ(sorted_names, in_order);
}

TEST(TraceviewChromeTraceTest, ExecutorCountIsACounterTrack) {
  const Json trace = Json::parse(ChromeTraceJson(Attempt(), TwoSteps(), "t"));
  const std::vector<Json> counters = EventsOf(trace, "C");
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[1].at("name"), "executors");
  EXPECT_EQ(counters[1].at("ts"), 30'000);
  EXPECT_EQ(counters[1].at("args").at("executors"), 3);
  EXPECT_TRUE(EventsOf(Json::parse(ChromeTraceJson(Attempt(), ExecutorSeries{}, "t")), "C").empty());
}

TEST(TraceviewChromeTraceTest, TextThatIsNotUtf8StaysValidJson) {
  std::vector<tracing::Span> spans = {MakeSpan("bad\xff name", 1, 0, 0, 1)};
  spans[0].status_message = "\xc3";
  const std::string text = ChromeTraceJson(spans, ExecutorSeries{}, "title \xfe");
  EXPECT_TRUE(Json::accept(text));
  EXPECT_EQ(EventsOf(Json::parse(ChromeTraceJson({}, ExecutorSeries{}, "empty")), "X").size(), 0u);
}

}  // namespace
}  // namespace sparktrace::traceview
