#include "cli/trace_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace sparktrace::cli {
namespace {

using tracing::Span;
using tracing::SpanKind;
using tracing::SpanEvent;
using tracing::StatusCode;

constexpr std::uint64_t kBase = 1'714'564'800'000'000'000ULL;  // 2024-05-01T12:00:00Z
constexpr std::uint64_t kMs = 1'000'000;

template <std::size_t N>
std::array<std::uint8_t, N> IdFromHex(const char* hex) {
  std::array<std::uint8_t, N> id{};
  for (std::size_t i = 0; i < N; ++i)
    id[i] = static_cast<std::uint8_t>(std::stoi(std::string(hex + 2 * i, 2), nullptr, 16));
  return id;
}

constexpr const char* kTrace = "0af7651916cd43dd8448eb211c80319c";

Span MakeSpan(const char* span_id, const char* parent_id, std::string name, std::uint64_t start_ms_offset,
              std::uint64_t duration_ns) {
  Span span;
  span.trace_id = IdFromHex<16>(kTrace);
  span.span_id = IdFromHex<8>(span_id);
  if (parent_id != nullptr) span.parent_span_id = IdFromHex<8>(parent_id);
  span.name = std::move(name);
  span.start_time_unix_nano = kBase + start_ms_offset * kMs;
  span.end_time_unix_nano = span.start_time_unix_nano + duration_ns;
  return span;
}

// An Airflow task with two operations, one with a Spark job under it and one failed.
std::vector<Span> SmallTree() {
  Span root = MakeSpan("b7ad6b7169203331", nullptr, "airflow.task", 0, 1500 * kMs);
  root.kind = SpanKind::kServer;
  root.attributes = {{"airflow.dag_id", std::string("etl")},
                     {"airflow.task_id", std::string("load")},
                     {"airflow.run_id", std::string("manual__1")},
                     {"airflow.try_number", std::int64_t{1}}};
  Span execute = MakeSpan("00f067aa0ba902b7", "b7ad6b7169203331", "ExecutePlan", 10, 800 * kMs);
  execute.status_code = StatusCode::kOk;
  execute.attributes = {{"spark.connect.operation_id", std::string("8f3c2a")},
                        {"spark.connect.session_id", std::string("not shown")},
                        {"spark.connect.operation.outcome", std::string("completed")},
                        {"spark.connect.response.rows", std::int64_t{100}},
                        // The trace's Airflow identity: shown once, on the top-level span.
                        {"airflow.dag_id", std::string("etl")}};
  Span job = MakeSpan("1111111111111111", "00f067aa0ba902b7", "spark.job 3", 20, 350'500'000);
  Span analyze = MakeSpan("2222222222222222", "b7ad6b7169203331", "AnalyzePlan", 900, 5 * kMs);
  analyze.status_code = StatusCode::kError;
  analyze.status_message = "boom";
  // Deliberately not in tree order.
  return {analyze, job, root, execute};
}

std::vector<std::string> Names(const std::vector<TraceTreeRow>& rows) {
  std::vector<std::string> names;
  names.reserve(rows.size());
  for (const auto& row : rows)
    names.push_back(row.span->name + "@" + std::to_string(row.depth) + (row.orphan ? "!" : ""));
  return names;
}

TEST(TraceTreeTest, FormatsDurationsInTheUnitThatFits) {
  EXPECT_EQ(FormatSpanDuration(0), "0s");
  EXPECT_EQ(FormatSpanDuration(850), "850ns");
  EXPECT_EQ(FormatSpanDuration(1'000), "1.00µs");
  EXPECT_EQ(FormatSpanDuration(1'234), "1.23µs");
  EXPECT_EQ(FormatSpanDuration(12'345), "12.3µs");
  EXPECT_EQ(FormatSpanDuration(123'456), "123µs");
  EXPECT_EQ(FormatSpanDuration(999'999), "999µs");  // truncated, never "1000µs"
  EXPECT_EQ(FormatSpanDuration(1'500'000), "1.50ms");
  EXPECT_EQ(FormatSpanDuration(350'500'000), "350ms");
  EXPECT_EQ(FormatSpanDuration(1'500'000'000), "1.50s");
  EXPECT_EQ(FormatSpanDuration(59'999'999'999), "59.9s");
  EXPECT_EQ(FormatSpanDuration(125'000'000'000), "2m05s");
  EXPECT_EQ(FormatSpanDuration(3'720'000'000'000), "1h02m");
  EXPECT_EQ(FormatSpanDuration(100ULL * 3600 * 1'000'000'000), "100h00m");
}

TEST(TraceTreeTest, FormatsIso8601InUtc) {
  EXPECT_EQ(FormatUnixNanoIso8601(0, 9), "1970-01-01T00:00:00.000000000Z");
  EXPECT_EQ(FormatUnixNanoIso8601(kBase + 123'456'789, 9), "2024-05-01T12:00:00.123456789Z");
  EXPECT_EQ(FormatUnixNanoIso8601(kBase + 123'456'789, 3), "2024-05-01T12:00:00.123Z");
  EXPECT_EQ(FormatUnixNanoIso8601(kBase + 999'999'999, 0), "2024-05-01T12:00:00Z");
  EXPECT_EQ(FormatUnixNanoIso8601((1'709'164'800ULL + 86'399) * 1'000'000'000, 0), "2024-02-29T23:59:59Z");
  EXPECT_EQ(FormatUnixNanoIso8601(4'102'444'800ULL * 1'000'000'000, 3), "2100-01-01T00:00:00.000Z");
}

TEST(TraceTreeTest, OrdersChildrenUnderParentsByStartTime) {
  const std::vector<Span> spans = SmallTree();
  EXPECT_EQ(Names(OrderTraceTree(spans)),
            (std::vector<std::string>{"airflow.task@0", "ExecutePlan@1", "spark.job 3@2", "AnalyzePlan@1"}));
}

TEST(TraceTreeTest, BreaksParentCyclesAndKeepsEverySpan) {
  std::vector<Span> spans = {
      MakeSpan("aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "a", 20, kMs),
      MakeSpan("bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa", "b", 10, kMs),
      MakeSpan("cccccccccccccccc", "cccccccccccccccc", "self", 30, kMs),
      MakeSpan("dddddddddddddddd", nullptr, "root", 40, kMs),
  };
  EXPECT_EQ(Names(OrderTraceTree(spans)), (std::vector<std::string>{"self@0!", "root@0", "b@0!", "a@1"}));
}

TEST(TraceTreeTest, RendersASmallTreeAsText) {
  const std::vector<Span> spans = SmallTree();
  EXPECT_EQ(
      RenderTraceText(spans),
      "trace 0af7651916cd43dd8448eb211c80319c  2024-05-01T12:00:00.000000000Z  1.50s  4 spans, 1 error\n"
      "      +0s     1.50s    airflow.task  dag=etl task=load run=manual__1 try=1\n"
      "  +10.0ms     800ms      ExecutePlan  op=8f3c2a outcome=completed rows=100\n"
      "  +20.0ms     350ms        spark.job 3\n"
      "   +900ms    5.00ms  !   AnalyzePlan  error: boom\n");
}

TEST(TraceTreeTest, RenderingDoesNotDependOnInputOrder) {
  std::vector<Span> spans = SmallTree();
  const std::string expected_text = RenderTraceText(spans);
  const std::string expected_json = RenderTraceJson(spans);
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.name < b.name; });
  do {
    EXPECT_EQ(RenderTraceText(spans), expected_text);
    EXPECT_EQ(RenderTraceJson(spans), expected_json);
  } while (std::next_permutation(spans.begin(), spans.end(),
                                 [](const Span& a, const Span& b) { return a.name < b.name; }));
}

TEST(TraceTreeTest, ShowsOrphansAtTopLevelWithTheirMissingParent) {
  Span root = MakeSpan("b7ad6b7169203331", nullptr, "airflow.task", 0, 100 * kMs);
  Span orphan = MakeSpan("3333333333333333", "9999999999999999", "ExecutePlan", 50, 20 * kMs);
  Span orphan_child = MakeSpan("4444444444444444", "3333333333333333", "spark.job 0", 55, 10 * kMs);
  Span early_orphan = MakeSpan("5555555555555555", "8888888888888888", "ReleaseSession", 0, 1'500);
  early_orphan.start_time_unix_nano -= 2'500;  // before the root: the trace starts here
  early_orphan.end_time_unix_nano = early_orphan.start_time_unix_nano + 1'500;
  const std::vector<Span> spans = {orphan_child, root, orphan, early_orphan};
  EXPECT_EQ(
      RenderTraceText(spans),
      "trace 0af7651916cd43dd8448eb211c80319c  2024-05-01T11:59:59.999997500Z  100ms  4 spans, 0 errors\n"
      "      +0s    1.50µs    ReleaseSession  [parent 8888888888888888 missing]\n"
      "  +2.50µs     100ms    airflow.task\n"
      "  +50.0ms    20.0ms    ExecutePlan  [parent 9999999999999999 missing]\n"
      "  +55.0ms    10.0ms      spark.job 0\n");
}

TEST(TraceTreeTest, MarksErrorsAndQuotesMessagesWithSpaces) {
  Span root = MakeSpan("b7ad6b7169203331", nullptr, "airflow.task", 0, 2 * kMs);
  root.status_code = StatusCode::kError;
  root.status_message = "AnalysisException: \"t\" not found";
  Span child = MakeSpan("1111111111111111", "b7ad6b7169203331", "ExecutePlan", 1, kMs);
  child.status_code = StatusCode::kError;  // no message
  child.attributes = {{"spark.connect.operation_id", std::string("op 1")},
                      {"spark.connect.response.bytes", std::int64_t{4096}}};
  Span backwards = MakeSpan("2222222222222222", "b7ad6b7169203331", "clock step", 1, 0);
  backwards.end_time_unix_nano = backwards.start_time_unix_nano - 1;
  const std::vector<Span> spans = {root, child, backwards};
  EXPECT_EQ(
      RenderTraceText(spans),
      "trace 0af7651916cd43dd8448eb211c80319c  2024-05-01T12:00:00.000000000Z  2.00ms  3 spans, 2 errors\n"
      "      +0s    2.00ms  ! airflow.task  error: \"AnalysisException: \\\"t\\\" not found\"\n"
      "  +1.00ms    1.00ms  !   ExecutePlan  op=\"op 1\" bytes=4096 error\n"
      "  +1.00ms         ?      clock step\n");
}

// A reported Airflow task says Airflow's state and operator on its line.
TEST(TraceTreeTest, ShowsAirflowsStateAndOperator) {
  Span root = MakeSpan("b7ad6b7169203331", nullptr, "airflow.task", 0, 2 * kMs);
  root.attributes = {{"airflow.task.state", std::string("up_for_retry")},
                     {"airflow.task.operator", std::string("PySparkOperator")}};
  const std::vector<Span> spans = {root};
  EXPECT_EQ(
      RenderTraceText(spans),
      "trace 0af7651916cd43dd8448eb211c80319c  2024-05-01T12:00:00.000000000Z  2.00ms  1 span, 0 errors\n"
      "      +0s    2.00ms    airflow.task  airflow=up_for_retry operator=PySparkOperator\n");
}

TEST(TraceTreeTest, RendersATraceAsJson) {
  Span root = MakeSpan("b7ad6b7169203331", nullptr, "airflow.task", 0, 1500 * kMs);
  root.kind = SpanKind::kServer;
  root.attributes = {{"airflow.dag_id", std::string("etl")}, {"airflow.try_number", std::int64_t{1}}};
  Span child = MakeSpan("00f067aa0ba902b7", "b7ad6b7169203331", "ExecutePlan", 10, 800 * kMs);
  child.kind = SpanKind::kClient;
  child.status_code = StatusCode::kError;
  child.status_message = "boom";
  child.trace_state = "rojo=00f067aa0ba902b7";
  child.attributes = {{"rows", std::int64_t{100}},
                      {"ratio", 0.5},
                      {"cached", false},
                      {"tags", std::vector<std::string>{"a", "b"}}};
  child.events = {SpanEvent{"exception", kBase + 700 * kMs, {{"exception.type", std::string("X")}}}};
  const std::vector<Span> spans = {child, root};
  EXPECT_EQ(RenderTraceJson(spans), R"json({
  "trace_id": "0af7651916cd43dd8448eb211c80319c",
  "start_time_unix_nano": "1714564800000000000",
  "start_time": "2024-05-01T12:00:00.000000000Z",
  "end_time_unix_nano": "1714564801500000000",
  "end_time": "2024-05-01T12:00:01.500000000Z",
  "duration_ns": 1500000000,
  "span_count": 2,
  "error_count": 1,
  "spans": [
    {
      "span_id": "b7ad6b7169203331",
      "parent_span_id": null,
      "depth": 0,
      "orphan": false,
      "name": "airflow.task",
      "kind": "server",
      "start_time_unix_nano": "1714564800000000000",
      "start_time": "2024-05-01T12:00:00.000000000Z",
      "end_time_unix_nano": "1714564801500000000",
      "end_time": "2024-05-01T12:00:01.500000000Z",
      "offset_ns": 0,
      "duration_ns": 1500000000,
      "status": {
        "code": "unset",
        "message": ""
      },
      "trace_state": "",
      "attributes": {
        "airflow.dag_id": "etl",
        "airflow.try_number": 1
      },
      "events": []
    },
    {
      "span_id": "00f067aa0ba902b7",
      "parent_span_id": "b7ad6b7169203331",
      "depth": 1,
      "orphan": false,
      "name": "ExecutePlan",
      "kind": "client",
      "start_time_unix_nano": "1714564800010000000",
      "start_time": "2024-05-01T12:00:00.010000000Z",
      "end_time_unix_nano": "1714564800810000000",
      "end_time": "2024-05-01T12:00:00.810000000Z",
      "offset_ns": 10000000,
      "duration_ns": 800000000,
      "status": {
        "code": "error",
        "message": "boom"
      },
      "trace_state": "rojo=00f067aa0ba902b7",
      "attributes": {
        "rows": 100,
        "ratio": 0.5,
        "cached": false,
        "tags": [
          "a",
          "b"
        ]
      },
      "events": [
        {
          "name": "exception",
          "time_unix_nano": "1714564800700000000",
          "time": "2024-05-01T12:00:00.700000000Z",
          "attributes": {
            "exception.type": "X"
          }
        }
      ]
    }
  ]
}
)json");
}

TEST(TraceTreeTest, RendersEmptyInputs) {
  EXPECT_EQ(RenderTraceText({}), "no spans\n");
  EXPECT_EQ(RenderAttemptListText({}), "no task attempts\n");
  EXPECT_EQ(RenderAttemptListJson({}), "{\n  \"attempts\": []\n}\n");
  EXPECT_EQ(RenderTraceJson({}),
            "{\n"
            "  \"trace_id\": null,\n"
            "  \"start_time_unix_nano\": \"0\",\n"
            "  \"start_time\": \"1970-01-01T00:00:00.000000000Z\",\n"
            "  \"end_time_unix_nano\": \"0\",\n"
            "  \"end_time\": \"1970-01-01T00:00:00.000000000Z\",\n"
            "  \"duration_ns\": 0,\n"
            "  \"span_count\": 0,\n"
            "  \"error_count\": 0,\n"
            "  \"spans\": []\n"
            "}\n");
}

// Two tasks' attempts sharing one trace (Airflow 2.10's per-run trace id), a mapped one, and a
// trace without Airflow identity.
std::vector<AttemptListing> ThreeAttempts() {
  AttemptListing load{true,  "etl.load",         "etl", "load", "manual__1", 1, -1, "failed", {kTrace},
                      kBase, kBase + 1500 * kMs, 4,     1};
  AttemptListing mapped{true,
                        "etl.score",
                        "etl",
                        "score",
                        "manual__1",
                        2,
                        3,
                        "success",
                        {kTrace},
                        kBase + 2000 * kMs,
                        kBase + 3000 * kMs,
                        2,
                        0};
  AttemptListing plain{false,
                       "nightly-compaction",
                       "",
                       "",
                       "",
                       0,
                       -1,
                       "running",
                       {"4bf92f3577b34da6a3ce929d0e0e4736"},
                       kBase + 61'500 * kMs,
                       kBase + 186'500 * kMs,
                       12,
                       0};
  return {load, mapped, plain};
}

TEST(TraceTreeTest, RendersAnAttemptListingAsAnAlignedTable) {
  EXPECT_EQ(RenderAttemptListText(ThreeAttempts()),
            "START                     DURATION  STATE    SPANS  ERRORS  TASK                RUN        TRY  "
            "TRACES\n"
            "2024-05-01T12:00:00.000Z  1.50s     failed   4      1       etl.load            manual__1  1    "
            "0af7651916cd43dd8448eb211c80319c\n"
            "2024-05-01T12:00:02.000Z  1.00s     success  2      0       etl.score[3]        manual__1  2    "
            "0af7651916cd43dd8448eb211c80319c\n"
            "2024-05-01T12:01:01.500Z  2m05s     running  12     0       nightly-compaction  -          -    "
            "4bf92f3577b34da6a3ce929d0e0e4736\n");
}

TEST(TraceTreeTest, RendersAnAttemptListingAsJson) {
  const std::vector<AttemptListing> attempts = ThreeAttempts();
  EXPECT_EQ(RenderAttemptListJson(std::span(attempts).subspan(1)), R"json({
  "attempts": [
    {
      "name": "etl.score",
      "dag_id": "etl",
      "task_id": "score",
      "run_id": "manual__1",
      "try_number": 2,
      "map_index": 3,
      "state": "success",
      "trace_ids": [
        "0af7651916cd43dd8448eb211c80319c"
      ],
      "start_time_unix_nano": "1714564802000000000",
      "start_time": "2024-05-01T12:00:02.000000000Z",
      "end_time_unix_nano": "1714564803000000000",
      "end_time": "2024-05-01T12:00:03.000000000Z",
      "duration_ns": 1000000000,
      "span_count": 2,
      "error_count": 0
    },
    {
      "name": "nightly-compaction",
      "dag_id": null,
      "task_id": null,
      "run_id": null,
      "try_number": null,
      "map_index": null,
      "state": "running",
      "trace_ids": [
        "4bf92f3577b34da6a3ce929d0e0e4736"
      ],
      "start_time_unix_nano": "1714564861500000000",
      "start_time": "2024-05-01T12:01:01.500000000Z",
      "end_time_unix_nano": "1714564986500000000",
      "end_time": "2024-05-01T12:03:06.500000000Z",
      "duration_ns": 125000000000,
      "span_count": 12,
      "error_count": 0
    }
  ]
}
)json");
}

}  // namespace
}  // namespace sparktrace::cli
