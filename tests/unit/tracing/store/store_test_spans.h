#pragma once
// Spans and comparisons shared by the store tests (the conformance suite and each backend's own).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tracing/span.h"
#include "tracing/store/span_store.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store::testing_spans {

inline constexpr std::uint64_t kBase = 1'714'564'800'000'000'000ULL;  // 2024-05-01T12:00:00Z
inline constexpr std::uint64_t kMs = 1'000'000;

inline TraceId TraceIdOf(std::uint32_t n) {
  TraceId id{};
  id[0] = 0xab;
  for (int i = 0; i < 4; ++i) id[15 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

inline SpanId SpanIdOf(std::uint32_t n) {
  SpanId id{};
  id[0] = 0xcd;
  for (int i = 0; i < 4; ++i) id[7 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

// span `span` of trace `trace`; parent 0 means a root.
inline Span MakeSpan(std::uint32_t trace, std::uint32_t span, std::uint32_t parent, std::string name,
                     std::uint64_t start, std::uint64_t end) {
  Span result;
  result.trace_id = TraceIdOf(trace);
  result.span_id = SpanIdOf(span);
  if (parent != 0) result.parent_span_id = SpanIdOf(parent);
  result.name = std::move(name);
  result.start_time_unix_nano = start;
  result.end_time_unix_nano = end;
  return result;
}

// A Config call's attributes as the proxy records them (tracing/connect/call_tracer.cc's order;
// bench/store_bench.cc's calls shape), with the figures that differ from call to call.
inline std::vector<Attribute> ConfigCallAttributes(std::int64_t peer_port = 41234,
                                                   double first_response_ms = 0.382747) {
  return {{"rpc.system", std::string("grpc")},
          {"rpc.service", std::string("spark.connect.SparkConnectService")},
          {"rpc.method", std::string("Config")},
          {"rpc.grpc.status_code", std::int64_t{0}},
          {"server.address", std::string("127.0.0.1")},
          {"server.port", std::int64_t{15002}},
          {"network.peer.address", std::string("10.1.2.3")},
          {"network.peer.port", peer_port},
          {"rpc.request.messages", std::int64_t{1}},
          {"rpc.request.bytes", std::int64_t{99}},
          {"rpc.response.messages", std::int64_t{1}},
          {"rpc.response.bytes", std::int64_t{76}},
          {"rpc.time_to_first_response_ms", first_response_ms},
          {"sparktrace.trace_origin", std::string("new")},
          {"spark.connect.session_id", std::string("3f1c2a9e-8b7d-4c6e-9a1f-2b3c4d5e6f70")},
          {"spark.connect.user_id", std::string("bench")},
          {"spark.connect.client_type", std::string("sparktrace-bench")},
          {"spark.connect.server_side_session_id", std::string("26da0a0a-3e96-43f5-bb60-baead94bd698")},
          {"spark.connect.config.operation", std::string("get")}};
}

// A call of session `session` (what it shares with the session's other calls: rows in the shared form,
// span_rows/shared/shared_attributes.h), trace `trace`, starting at `start`.
inline Span SessionCall(std::uint32_t trace, const std::string& session, std::uint64_t start) {
  Span call = MakeSpan(trace, 1, 0, "spark.connect.SparkConnectService/Config", start, start + kMs);
  call.attributes = {{"rpc.system", std::string("grpc")},
                     {"rpc.service", std::string("spark.connect.SparkConnectService")},
                     {"rpc.method", std::string("Config")},
                     {"network.peer.port", static_cast<std::int64_t>(40000 + trace)},
                     {"spark.connect.session_id", session},
                     {"spark.connect.user_id", std::string("etl")},
                     {"spark.connect.client_type", std::string("_SPARK_CONNECT_PYTHON spark/3.5.1")}};
  return call;
}

// Session "s-1"'s 20 calls (traces 1-20), then session "s-2"'s one (trace 21).
inline std::vector<Span> TwentyCallsOfASessionAndOneOfAnother() {
  std::vector<Span> calls;
  for (std::uint32_t trace = 1; trace <= 20; ++trace)
    calls.push_back(SessionCall(trace, "s-1", kBase + trace * kMs));
  calls.push_back(SessionCall(21, "s-2", kBase));
  return calls;
}

inline constexpr std::uint64_t kMinuteNanos = 60'000'000'000ULL;
inline constexpr std::uint64_t kHourNanos = 60 * kMinuteNanos;
inline constexpr std::uint64_t kDayNanos = 24 * kHourNanos;

inline std::uint64_t NowNanos() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

inline void ExpectAttributesEq(const std::vector<Attribute>& actual, const std::vector<Attribute>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(actual[i].key, expected[i].key) << "attribute " << i;
    EXPECT_EQ(actual[i].value.index(), expected[i].value.index()) << expected[i].key << ": value kind";
    EXPECT_TRUE(actual[i].value == expected[i].value) << expected[i].key << ": value";
  }
}

inline void ExpectSpanEq(const Span& actual, const Span& expected) {
  EXPECT_EQ(ToHex(actual.trace_id), ToHex(expected.trace_id));
  EXPECT_EQ(ToHex(actual.span_id), ToHex(expected.span_id));
  EXPECT_EQ(ToHex(actual.parent_span_id), ToHex(expected.parent_span_id));
  EXPECT_EQ(actual.trace_state, expected.trace_state);
  EXPECT_EQ(actual.name, expected.name);
  EXPECT_EQ(actual.kind, expected.kind);
  EXPECT_EQ(actual.start_time_unix_nano, expected.start_time_unix_nano);
  EXPECT_EQ(actual.end_time_unix_nano, expected.end_time_unix_nano);
  EXPECT_EQ(actual.status_code, expected.status_code);
  EXPECT_EQ(actual.status_message, expected.status_message);
  ExpectAttributesEq(actual.attributes, expected.attributes);
  ASSERT_EQ(actual.events.size(), expected.events.size());
  for (std::size_t i = 0; i < expected.events.size(); ++i) {
    EXPECT_EQ(actual.events[i].name, expected.events[i].name);
    EXPECT_EQ(actual.events[i].time_unix_nano, expected.events[i].time_unix_nano);
    ExpectAttributesEq(actual.events[i].attributes, expected.events[i].attributes);
  }
}

// The trace of `written` reads back from `store` as that one span, exactly.
inline void ExpectReadsBack(SpanStore& store, const Span& written) {
  auto read = store.GetTrace(written.trace_id);
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  ASSERT_EQ(read->size(), 1U);
  ExpectSpanEq(read->front(), written);
}

inline std::vector<std::string> TraceHexes(const std::vector<TraceSummary>& summaries) {
  std::vector<std::string> hexes;
  hexes.reserve(summaries.size());
  for (const auto& summary : summaries) hexes.push_back(ToHex(summary.trace_id));
  return hexes;
}

}  // namespace sparktrace::tracing::store::testing_spans
