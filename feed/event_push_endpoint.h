#pragma once
// The driver-event push endpoint (POST /api/v1/events; docs/tracing.md "Driver events"): takes a
// body of Spark listener events as JSON lines, parses it at once (so that the answer can say how
// many lines were accepted and how many were malformed), and queues the events for the feed
// thread, which applies them in arrival order to the stream's application model.
//
// The stream (which application the lines belong to) is named by `?app=<id>` or the header
// X-Spark-App-Id; without either, by the body's SparkListenerApplicationStart (its app id and
// attempt), and the answer names it so that the pusher can send the next chunks with ?app=.
//
// Bounded: bodies over `max_body_bytes` are refused (413); while the queue holds
// `max_queued_bytes` of bodies (or `max_queued_batches`) not yet applied, pushes are refused with
// 503 and Retry-After instead of buffering without limit. After Close() (the feed is stopping)
// every push is refused with 503.
//
// Threads: Push() may be called from any thread (the admin server's); TakeAll() from the feed's.
// The `on_queued` callback runs on the pushing thread, after the batch is queued.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "feed/feed_parser_options.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"

namespace sparktrace::feed {

struct EventPushOptions {
  std::size_t max_body_bytes = std::size_t{16} << 20;
  std::size_t max_queued_bytes = std::size_t{64} << 20;  // bodies accepted, not yet applied
  std::size_t max_queued_batches = 1024;
};

struct PushRequest {
  std::string_view query;                       // the URL's query, undecoded
  std::optional<std::string> app_header;        // X-Spark-App-Id
  std::optional<std::string> content_encoding;  // only identity (or none) is accepted
  std::string_view body;
};

struct PushReply {
  int status = 200;
  std::string body;  // JSON: {"accepted":N,"malformed":M,"app":"..."} or {"error":"..."}
  std::optional<int> retry_after_seconds;
};

// One accepted push, waiting for the feed thread.
struct PushedBatch {
  std::string stream;
  std::vector<listener::events::SparkEvent> events;
  std::size_t body_bytes = 0;
};

struct EventPushCounters {
  std::uint64_t pushes = 0;           // accepted bodies
  std::uint64_t lines = 0;            // accepted lines (Spark events)
  std::uint64_t malformed_lines = 0;  // of accepted bodies
  std::uint64_t rejected_too_large = 0;
  std::uint64_t rejected_bad_request = 0;  // no or invalid app id, unsupported encoding
  std::uint64_t rejected_busy = 0;         // queue full or shutting down
};

class EventPushEndpoint {
 public:
  EventPushEndpoint(EventPushOptions options, std::function<void()> on_queued);
  EventPushEndpoint(const EventPushEndpoint&) = delete;
  EventPushEndpoint& operator=(const EventPushEndpoint&) = delete;

  PushReply Push(const PushRequest& request);
  // Every batch queued so far, oldest first; frees their room in the queue.
  std::vector<PushedBatch> TakeAll();
  // Refuses every later push; once it returns, `on_queued` is not running and will not run.
  void Close();

  EventPushCounters counters() const;
  std::size_t max_body_bytes() const { return options_.max_body_bytes; }

 private:
  const EventPushOptions options_;
  const std::function<void()> on_queued_;

  mutable std::mutex mu_;
  listener::events::EventParser parser_{FeedParserOptions()};  // guarded by mu_
  std::vector<PushedBatch> queue_;
  std::size_t queued_bytes_ = 0;
  bool closed_ = false;
  EventPushCounters counters_;
};

}  // namespace sparktrace::feed
