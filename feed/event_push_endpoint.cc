#include "feed/event_push_endpoint.h"

#include <utility>

#include "feed/push_body.h"

namespace sparktrace::feed {
namespace {

// Stream names are validated to [A-Za-z0-9._:@/+-]; messages are ours: nothing to escape but
// what ValidateStreamName already excludes.
PushReply ErrorReply(int status, std::string_view message) {
  PushReply reply;
  reply.status = status;
  reply.body = "{\"error\":\"" + std::string(message) + "\"}\n";
  return reply;
}

}  // namespace

EventPushEndpoint::EventPushEndpoint(EventPushOptions options, std::function<void()> on_queued)
    : options_(options), on_queued_(std::move(on_queued)) {}

PushReply EventPushEndpoint::Push(const PushRequest& request) {
  // Parsing and queueing under one lock keeps the queue in arrival order, which is the order
  // the lines are applied in. Pushes come from the one admin thread, so nothing waits on it.
  std::lock_guard lock(mu_);
  if (closed_) {
    ++counters_.rejected_busy;
    PushReply reply = ErrorReply(503, "shutting down");
    reply.retry_after_seconds = 5;
    return reply;
  }
  if (request.content_encoding && !request.content_encoding->empty() &&
      *request.content_encoding != "identity") {
    ++counters_.rejected_bad_request;
    return ErrorReply(415, "Content-Encoding not supported; send plain JSON lines");
  }
  if (request.body.size() > options_.max_body_bytes) {
    ++counters_.rejected_too_large;
    return ErrorReply(413, "body larger than " + std::to_string(options_.max_body_bytes) + " bytes");
  }
  std::optional<std::string> named = QueryParameter(request.query, "app");
  if (!named) named = request.app_header;
  std::optional<std::string> stream;
  if (named) {
    auto valid = ValidateStreamName(*named);
    if (!valid.ok()) {
      ++counters_.rejected_bad_request;
      return ErrorReply(400, valid.error().message);
    }
    stream = std::move(*valid);
  }
  if (queue_.size() >= options_.max_queued_batches ||
      (!queue_.empty() && queued_bytes_ + request.body.size() > options_.max_queued_bytes)) {
    ++counters_.rejected_busy;
    PushReply reply = ErrorReply(503, "busy: events not yet applied fill the queue; retry later");
    reply.retry_after_seconds = 1;
    return reply;
  }
  ParsedPush parsed = ParsePushBody(request.body, parser_);
  if (!stream && parsed.application) {
    if (auto valid = ValidateStreamName(*parsed.application); valid.ok()) stream = std::move(*valid);
  }
  if (!stream && !parsed.events.empty()) {
    ++counters_.rejected_bad_request;
    return ErrorReply(400,
                      "which application? name it with ?app=<app id> or X-Spark-App-Id, or send its "
                      "SparkListenerApplicationStart first");
  }
  ++counters_.pushes;
  counters_.lines += parsed.accepted;
  counters_.malformed_lines += parsed.malformed;
  PushReply reply;
  reply.body = "{\"accepted\":" + std::to_string(parsed.accepted) +
               ",\"malformed\":" + std::to_string(parsed.malformed);
  if (stream) reply.body += ",\"app\":\"" + *stream + "\"";
  reply.body += "}\n";
  if (parsed.events.empty()) return reply;
  queued_bytes_ += request.body.size();
  queue_.push_back(PushedBatch{std::move(*stream), std::move(parsed.events), request.body.size()});
  if (on_queued_) on_queued_();
  return reply;
}

std::vector<PushedBatch> EventPushEndpoint::TakeAll() {
  std::lock_guard lock(mu_);
  std::vector<PushedBatch> taken;
  taken.swap(queue_);
  queued_bytes_ = 0;
  return taken;
}

void EventPushEndpoint::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
}

EventPushCounters EventPushEndpoint::counters() const {
  std::lock_guard lock(mu_);
  return counters_;
}

}  // namespace sparktrace::feed
