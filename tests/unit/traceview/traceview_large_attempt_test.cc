// A large attempt through the trace view's API (traceview/trace_view_api.h) over a real SQLite store:
// an attempt of a call per trace is read in one query, listed up to --view-max-spans with the rest
// summarised (traceview/span_bound.h), revalidated from the index's revision without reading spans
// (traceview/attempt_revision.h), and named in the task list by its first traces only.

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/unit/traceview/sqlite_store_fixture.h"
#include "tests/unit/traceview/traceview_test_spans.h"
#include "traceview/trace_view_api.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::traceview {
namespace {

using tracing::Span;

// Counts the span reads a request makes, over a real store.
class SpanReadCountingStore final : public tracing::store::SpanStore {
 public:
  SpanReadCountingStore(std::unique_ptr<tracing::store::SpanStore> store, int* get_trace, int* get_traces)
      : store_(std::move(store)), get_trace_(get_trace), get_traces_(get_traces) {}

  Result<tracing::store::WriteStats> Write(std::span<const Span> spans) override { return store_->Write(spans); }
  Result<std::vector<tracing::TraceSummary>> ListTraces(const tracing::store::TraceFilter& filter) override {
    return store_->ListTraces(filter);
  }
  Result<std::vector<Span>> GetTrace(const tracing::TraceId& trace_id) override {
    ++*get_trace_;
    return store_->GetTrace(trace_id);
  }
  Result<std::vector<Span>> GetTraces(std::span<const tracing::TraceId> trace_ids) override {
    ++*get_traces_;
    return store_->GetTraces(trace_ids);
  }
  Result<tracing::TraceId> FindTraceByOperation(std::string_view operation_id) override {
    return store_->FindTraceByOperation(operation_id);
  }
  Result<tracing::store::TaskAttemptPage> ListTaskAttempts(const tracing::store::TaskAttemptFilter& filter) override {
    return store_->ListTaskAttempts(filter);
  }
  Result<std::vector<std::string>> TracesMatching(std::string_view text) override {
    return store_->TracesMatching(text);
  }
  Result<tracing::store::DueAttempts> ListDueAttempts(std::chrono::system_clock::time_point now,
                                                      std::chrono::milliseconds quiet, std::size_t limit) override {
    return store_->ListDueAttempts(now, quiet, limit);
  }
  Result<tracing::store::SettleClaim> RecordSettlement(const tracing::store::AttemptRef& ref,
                                                       std::uint64_t indexed_unix_nano,
                                                       const tracing::store::SettledFigures& figures) override {
    return store_->RecordSettlement(ref, indexed_unix_nano, figures);
  }
  Result<tracing::store::RetentionStats> EnforceRetention(std::chrono::system_clock::time_point now) override {
    return store_->EnforceRetention(now);
  }
  const std::string& description() const override { return store_->description(); }
  bool read_only() const override { return store_->read_only(); }

 private:
  std::unique_ptr<tracing::store::SpanStore> store_;
  int* get_trace_;
  int* get_traces_;
};

tracing::TraceId CallTrace(std::uint32_t n) {
  tracing::TraceId id{};
  id[0] = 0xca;
  for (int i = 0; i < 4; ++i) id[15 - i] = static_cast<std::uint8_t>(n >> (8 * i));
  return id;
}

// Call n of an attempt whose client sends no traceparent: a trace of its own, one span.
Span ConfigCallSpan(std::uint32_t n, bool failed) {
  Span span;
  span.trace_id = CallTrace(n);
  span.span_id[7] = 1;
  span.name = std::string(tracing::kSparkConnectRpcSpanPrefix) + "Config";
  span.kind = tracing::SpanKind::kServer;
  span.start_time_unix_nano = traceview_test::kBase + std::uint64_t{n} * 10 * traceview_test::kMs;
  span.end_time_unix_nano = span.start_time_unix_nano + 2 * traceview_test::kMs;
  if (failed) span.status_code = tracing::StatusCode::kError;
  traceview_test::AddIdentity(span, "calls", "config", "run-1", 1);
  return span;
}

class LargeAttemptTest : public traceview_test::SqliteStoreFixture {
 protected:
  LargeAttemptTest() : SqliteStoreFixture("sparktrace-large-attempt-") {}

  static constexpr std::uint32_t kCalls = 500;
  static constexpr const char* kQuery = "dag=calls&task=config&run=run-1&try=1";

  void WriteCalls(std::uint32_t first, std::uint32_t count) {
    std::vector<Span> spans;
    for (std::uint32_t n = first; n < first + count; ++n) spans.push_back(ConfigCallSpan(n, n % 100 == 7));
    Write(spans);
  }

  TraceViewApi Api(std::size_t max_spans) {
    TraceViewOptions options{tracing::store::SqliteAt(path_)};
    options.max_spans = max_spans;
    options.open_store = [this]() -> Result<std::unique_ptr<tracing::store::SpanStore>> {
      tracing::store::StoreOptions reader;
      reader.read_only = true;
      auto store = tracing::store::SqliteSpanStore::Open(path_, reader);
      if (!store.ok()) return store.error();
      return std::unique_ptr<tracing::store::SpanStore>(
          std::make_unique<SpanReadCountingStore>(std::move(store).value(), &get_trace_, &get_traces_));
    };
    return TraceViewApi(std::move(options));
  }

  static admin::HttpResponse GetAttempt(TraceViewApi& api, const std::string& if_none_match = "") {
    admin::HttpRequest request;
    request.path = "/api/v1/attempt";
    request.query = kQuery;
    request.header = [if_none_match](const std::string& name) -> std::optional<std::string> {
      if (name == "If-None-Match" && !if_none_match.empty()) return if_none_match;
      return std::nullopt;
    };
    auto response = api.Handle(request);
    EXPECT_TRUE(response.has_value());
    return response.value_or(admin::HttpResponse{599, "", "", {}});
  }

  static std::string EtagOf(const admin::HttpResponse& response) {
    for (const auto& [name, value] : response.headers) {
      if (name == "ETag") return value;
    }
    return "";
  }

  int get_trace_ = 0;
  int get_traces_ = 0;
};

TEST_F(LargeAttemptTest, ReadsACallPerTraceAttemptInOneQueryAndSummarisesPastTheBound) {
  WriteCalls(0, kCalls);
  TraceViewApi api = Api(100);
  const auto response = GetAttempt(api);
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(get_traces_, 1);
  EXPECT_EQ(get_trace_, 0);
  const auto json = nlohmann::json::parse(response.body);
  EXPECT_EQ(json["trace_ids"].size(), kCalls);
  EXPECT_EQ(json["span_bound"]["max_spans"], 100);
  EXPECT_EQ(json["span_bound"]["total"], kCalls);
  EXPECT_EQ(json["span_bound"]["listed"], 100);
  EXPECT_EQ(json["span_bound"]["summarised"], kCalls - 100);
  EXPECT_EQ(json["spans"].size(), 100u);
  // The failed calls are listed first of all lone calls; the breakdown is still of all 500.
  int failed = 0;
  for (const auto& span : json["spans"]) failed += span["status"] == "error" ? 1 : 0;
  EXPECT_EQ(failed, 5);
  EXPECT_DOUBLE_EQ(json["wall_ms"].get<double>(), (kCalls - 1) * 10.0 + 2.0);
  ASSERT_EQ(json["span_groups"].size(), 1u);
  const auto& group = json["span_groups"][0];
  EXPECT_EQ(group["lane"], "rpc");
  EXPECT_EQ(group["label"], "Config");
  EXPECT_EQ(group["count"], kCalls - 100);
  EXPECT_EQ(group["error_count"], 0);
  std::int64_t starts = 0;
  for (const auto& slice : group["buckets"]["starts"]) starts += slice.get<std::int64_t>();
  EXPECT_EQ(starts, kCalls - 100);
  EXPECT_EQ(group["buckets"]["starts"].size(), kSpanGroupBuckets);
}

TEST_F(LargeAttemptTest, TheTaskListNamesTheFirstTwentyTracesOfAnAttemptAndSaysThereAreMore) {
  const auto listed_row = [this]() {
    TraceViewApi api = Api(100);
    admin::HttpRequest request;
    request.path = "/api/v1/tasks";
    const auto response = api.Handle(request);
    EXPECT_TRUE(response.has_value() && response->status == 200);
    const auto json = nlohmann::json::parse(response ? response->body : "{}");
    EXPECT_EQ(json["schema"], "sparktrace.tasks/2");
    EXPECT_EQ(json["tasks"].size(), 1u);
    return json["tasks"].empty() ? nlohmann::json::object() : json["tasks"][0];
  };
  WriteCalls(0, 20);
  nlohmann::json row = listed_row();
  EXPECT_EQ(row["trace_ids"].size(), 20u);
  EXPECT_EQ(row["trace_ids_truncated"], false);

  WriteCalls(20, kCalls - 20);
  row = listed_row();
  std::vector<std::string> first;
  for (std::uint32_t n = 0; n < 20; ++n) first.push_back(tracing::ToHex(CallTrace(n)));
  EXPECT_EQ(row["trace_ids"].get<std::vector<std::string>>(), first);
  EXPECT_EQ(row["trace_ids_truncated"], true);
  EXPECT_EQ(row["href"], "/attempt?dag=calls&task=config&run=run-1&try=1");
  // The attempt's own answer names every trace.
  TraceViewApi api = Api(100);
  EXPECT_EQ(nlohmann::json::parse(GetAttempt(api).body)["trace_ids"].size(), kCalls);
}

TEST_F(LargeAttemptTest, ListsEverySpanWithinTheBoundOrWithoutOne) {
  WriteCalls(0, 50);
  for (const std::size_t bound : {std::size_t{50}, std::size_t{0}}) {
    TraceViewApi api = Api(bound);
    const auto json = nlohmann::json::parse(GetAttempt(api).body);
    EXPECT_EQ(json["spans"].size(), 50u);
    EXPECT_EQ(json["span_bound"]["summarised"], 0);
    EXPECT_TRUE(json["span_groups"].empty());
  }
}

TEST_F(LargeAttemptTest, AMatchingRevisionIsNotModifiedWithoutReadingSpans) {
  WriteCalls(0, 20);
  TraceViewApi api = Api(100);
  const auto first = GetAttempt(api);
  ASSERT_EQ(first.status, 200);
  const std::string etag = EtagOf(first);
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(get_traces_, 1);

  const auto again = GetAttempt(api, etag);
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(EtagOf(again), etag);
  EXPECT_EQ(get_traces_, 1);  // answered from the index rows alone
  EXPECT_EQ(get_trace_, 0);
  EXPECT_EQ(GetAttempt(api, "\"r0000\"").status, 200);  // another tag: the answer

  // A new call changes the attempt's row, so its tag: the old one gets the new answer.
  WriteCalls(20, 1);
  const auto changed = GetAttempt(api, etag);
  ASSERT_EQ(changed.status, 200);
  EXPECT_NE(EtagOf(changed), etag);
  EXPECT_EQ(nlohmann::json::parse(changed.body)["spans"].size(), 21u);

  // Another process (or other settings) never shares a tag.
  TraceViewApi other = Api(50);
  EXPECT_EQ(GetAttempt(other, EtagOf(changed)).status, 200);
}

}  // namespace
}  // namespace sparktrace::traceview
