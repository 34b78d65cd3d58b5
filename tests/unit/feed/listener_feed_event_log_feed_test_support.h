#pragma once
// Shared by the EventLogFeed tests: a span sink that keeps the latest version of each span, the
// event log lines of a plain and of a Spark Connect application, and the fixture that starts a feed
// and pushes lines to it.

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "feed/event_log_feed.h"
#include "tests/unit/feed/listener_feed_test_support.h"
#include "tests/unit/listener/correlate/listener_correlate_test_lines.h"
#include "tracing/span.h"
#include "tracing/span_sink.h"

namespace sparktrace::feed {

namespace tl = listener::correlate::test_lines;

// Keeps the latest version of each span, final or live (the store replaces by trace and span id),
// and counts the final submissions of each (what an OTLP collector would receive).
class LatestSpans final : public tracing::SpanSink {
 public:
  void Submit(tracing::Span span) override {
    std::lock_guard lock(mu_);
    ++submitted_;
    ++finals_[{span.trace_id, span.span_id}];
    spans_[{span.trace_id, span.span_id}] = std::move(span);
  }
  void SubmitLive(tracing::Span span) override {
    std::lock_guard lock(mu_);
    ++live_submitted_;
    spans_[{span.trace_id, span.span_id}] = std::move(span);
  }
  // How often the span was submitted final.
  int Finals(const tracing::Span& span) const {
    std::lock_guard lock(mu_);
    auto found = finals_.find({span.trace_id, span.span_id});
    return found == finals_.end() ? 0 : found->second;
  }
  std::size_t live_submitted() const {
    std::lock_guard lock(mu_);
    return live_submitted_;
  }
  std::vector<tracing::Span> Named(const std::string& name) const {
    std::lock_guard lock(mu_);
    std::vector<tracing::Span> found;
    for (const auto& [key, span] : spans_) {
      if (span.name == name) found.push_back(span);
    }
    return found;
  }
  std::vector<tracing::Span> WithPrefix(const std::string& prefix) const {
    std::lock_guard lock(mu_);
    std::vector<tracing::Span> found;
    for (const auto& [key, span] : spans_) {
      if (span.name.starts_with(prefix)) found.push_back(span);
    }
    return found;
  }
  std::size_t submitted() const {
    std::lock_guard lock(mu_);
    return submitted_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<tracing::TraceId, tracing::SpanId>, tracing::Span> spans_;
  std::map<std::pair<tracing::TraceId, tracing::SpanId>, int> finals_;
  std::size_t submitted_ = 0;
  std::size_t live_submitted_ = 0;
};

inline const tracing::Attribute* FindAttribute(const tracing::Span& span, const std::string& key) {
  for (const auto& attribute : span.attributes) {
    if (attribute.key == key) return &attribute;
  }
  return nullptr;
}

inline std::string Body(const std::vector<std::string>& lines) {
  std::string body;
  for (const std::string& line : lines) body += line + "\n";
  return body;
}

// A plain spark-submit application: two jobs, the first writing output, the second failing.
inline std::vector<std::string> PlainApplication() {
  constexpr std::int64_t t0 = 1'700'000'000'000;
  return {tl::AppStart("app-plain", t0),
          tl::ExecutorAdded("1", t0 + 2'000),
          tl::JobStart(1, t0 + 3'000, {1}, {}),
          tl::StageSubmitted(1, t0 + 3'000, 1),
          tl::TaskEnd(1, 1, t0 + 3'000, t0 + 9'000, tl::TaskFigures{.output_bytes = 10}),
          tl::StageCompleted(1, t0 + 3'000, t0 + 10'000, 1),
          tl::JobEnd(1, t0 + 10'000),
          tl::JobStart(2, t0 + 12'000, {2}, {}),
          tl::StageSubmitted(2, t0 + 12'000, 1),
          tl::TaskEnd(2, 2, t0 + 12'000, t0 + 20'000),
          tl::StageCompleted(2, t0 + 12'000, t0 + 21'000, 1),
          tl::JobEnd(2, t0 + 21'000, /*succeeded=*/false),
          tl::AppEnd(t0 + 25'000)};
}

// A Spark Connect server application "app-connect" whose operation "op-1" (user "u", session "s")
// ran job 1 (stage 1), then ends with the Connect event `last_phase` at `last_ms`.
inline constexpr std::int64_t kConnectAppStartMs = 1'700'000'000'000;
inline std::vector<std::string> ConnectOperationWithOneJob(std::string_view last_phase,
                                                           std::int64_t last_ms) {
  const std::string tag = tl::OperationTag("u", "s", "op-1");
  constexpr std::int64_t t0 = kConnectAppStartMs;
  return {tl::AppStart("app-connect", t0),
          tl::ExecutorAdded("1", t0 + 1'000),
          tl::ConnectOperation("Started", tag, "op-1", t0 + 2'000, "s", "u"),
          tl::JobStart(1, t0 + 3'000, {1}, {tag}),
          tl::StageSubmitted(1, t0 + 3'000, 1),
          tl::StageCompleted(1, t0 + 3'000, t0 + 4'000, 1),
          tl::JobEnd(1, t0 + 4'000),
          tl::ConnectOperation(last_phase, tag, "op-1", last_ms)};
}

class ListenerFeedEventLogFeed : public ::testing::Test {
 protected:
  void Start(EventLogFeedOptions options = Defaults()) {
    auto feed = EventLogFeed::Start(
        std::move(options),
        [this](std::string_view operation_id) -> std::optional<OperationSpanTarget> {
          if (auto task = airflow_tasks_.find(std::string(operation_id)); task != airflow_tasks_.end()) {
            OperationSpanTarget target = operation_span_;
            target.airflow_task = task->second;
            return target;
          }
          if (operation_id != known_operation_) return std::nullopt;
          return operation_span_;
        },
        spans_);
    ASSERT_TRUE(feed.ok()) << feed.error().message;
    feed_ = std::move(*feed);
  }

  static EventLogFeedOptions Defaults() {
    EventLogFeedOptions options;
    options.poll_interval = std::chrono::hours(1);  // the tests poll with PollNow
    options.push = EventPushOptions{};
    return options;
  }

  PushReply Push(const std::vector<std::string>& lines, std::string_view query = "") {
    const std::string body = Body(lines);
    PushRequest request;
    request.query = query;
    request.body = body;
    return feed_->push_endpoint()->Push(request);
  }

  double Metric(const std::string& name,
                const std::vector<std::pair<std::string, std::string>>& labels = {}) {
    return Value(feed_->metrics()->Collect(), name, labels);
  }

  LatestSpans spans_;
  std::string known_operation_;                       // the proxy saw it, with no Airflow identity
  std::map<std::string, AirflowTask> airflow_tasks_;  // by operation id: the proxy saw these with one
  OperationSpanTarget operation_span_{tracing::TraceId{1, 2, 3}, tracing::SpanId{4, 5, 6}, true,
                                      std::nullopt};
  std::unique_ptr<EventLogFeed> feed_;
};

}  // namespace sparktrace::feed
