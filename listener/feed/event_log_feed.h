#pragma once
// Follows the driver's event logs (or polls its REST API) while the proxy runs and puts what the driver did
// for each Spark Connect operation — its jobs, stages and phases — into the operation's trace, under the span
// the proxy recorded for it (docs/tracing.md, "Driver events").
//
// Threads: one thread of its own polls the logs every `poll_interval`, parses and models them, and
// submits spans; `find_operation_span` and the sink are called on it. Spans are rebuilt while an
// operation's jobs run and carry ids derived from the application and job/stage, so the store
// replaces earlier versions instead of adding to them.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "listener/correlate/application_model.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/events/event_parser.h"
#include "listener/rest/rest_poller.h"
#include "tracing/span.h"
#include "tracing/span_sink.h"

namespace sparktrace::listener {

// Where the proxy's span of an operation is; nullopt when the proxy never saw that operation.
struct OperationSpanTarget {
  tracing::TraceId trace_id{};
  tracing::SpanId span_id{};
  bool sampled = false;
};
using FindOperationSpan = std::function<std::optional<OperationSpanTarget>(std::string_view operation_id)>;

struct EventLogFeedOptions {
  std::vector<std::string> directories;  // event-log directories (may be empty with spark_ui_url)
  std::string spark_ui_url;              // the driver's REST API (--spark-ui); empty: not polled
  std::chrono::milliseconds poll_interval{1000};
};

struct EventLogFeedCounters {
  std::uint64_t lines = 0;
  std::uint64_t events = 0;
  std::uint64_t malformed_lines = 0;
  std::uint64_t operations_traced = 0;   // operations whose spans were submitted at least once
  std::uint64_t operations_unknown = 0;  // seen in the logs, never through this proxy
  std::uint64_t spans_submitted = 0;
  std::uint64_t rest_events = 0;
  std::uint64_t rest_errors = 0;
};

class EventLogFeed final : private eventlog::EventLogSink {
 public:
  static Result<std::unique_ptr<EventLogFeed>> Start(EventLogFeedOptions options,
                                                     FindOperationSpan find_operation_span,
                                                     tracing::SpanSink& spans);
  ~EventLogFeed() override;  // stops the thread after one last poll
  EventLogFeed(const EventLogFeed&) = delete;
  EventLogFeed& operator=(const EventLogFeed&) = delete;

  EventLogFeedCounters counters() const;
  // Polls now and waits for it (tests, shutdown); the thread keeps polling afterwards.
  void PollNow();

 private:
  struct Application {
    ApplicationModel model;
    bool changed = false;  // events applied since the last emission
  };
  struct OperationProgress {
    std::string log_id;
    std::string operation_id;
    bool emitted = false;
    std::size_t jobs_emitted = 0;
    bool all_jobs_ended = false;
    int lookups_failed = 0;
  };

  EventLogFeed(EventLogFeedOptions options, FindOperationSpan find_operation_span, tracing::SpanSink& spans,
               std::unique_ptr<eventlog::EventLogScanner> scanner, std::unique_ptr<rest::RestPoller> rest);
  void PollRest();
  void Run();
  void PollOnce();
  void EmitChangedApplications();
  void EmitOperation(const std::string& log_id, const ApplicationModel& model,
                     const std::string& operation_id);

  eventlog::LineVerdict OnLine(const eventlog::LogIdentity& log, std::string_view line,
                               const eventlog::LinePosition& position) override;
  void OnLogRestarted(const eventlog::LogIdentity& log, std::uint64_t generation,
                      std::string_view reason) override;
  void OnLogCompleted(const eventlog::LogIdentity& log) override;

  const EventLogFeedOptions options_;
  const FindOperationSpan find_operation_span_;
  tracing::SpanSink& spans_;
  std::unique_ptr<eventlog::EventLogScanner> scanner_;  // feed thread only; null without directories
  std::unique_ptr<rest::RestPoller> rest_;              // feed thread only; null without --spark-ui
  EventParser parser_;                                  // feed thread only
  std::map<std::string, Application> applications_;     // by log id; feed thread only
  std::map<std::string, OperationProgress> progress_;   // by "log id/operation id"; feed thread only

  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable polled_;
  bool stopping_ = false;
  std::uint64_t poll_requests_ = 0;
  std::uint64_t polls_done_ = 0;
  EventLogFeedCounters counters_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace sparktrace::listener
