#pragma once
// The body of a driver-event push (POST /api/v1/events, docs/tracing.md "Driver events"): Spark
// listener events as JSON lines, exactly as in an event log, and the name of the stream they
// belong to.
//
// Pure functions, apart from the caller's EventParser (not thread-safe: one per calling thread).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "listener/events/event_parser.h"
#include "listener/events/spark_event.h"

namespace sparktrace::feed {

struct ParsedPush {
  // The events to apply, in body order. Valid events of types the model does not use are counted
  // in `accepted` but not kept.
  std::vector<listener::events::SparkEvent> events;
  std::uint64_t accepted = 0;   // lines that are Spark events
  std::uint64_t malformed = 0;  // lines that are not (bad JSON, missing fields): skipped
  // "<app id>[/<attempt id>]" of the body's first SparkListenerApplicationStart, if any.
  std::optional<std::string> application;
};

// Splits `body` into lines ('\n', a trailing '\r' is fine; blank lines are skipped) and parses each.
ParsedPush ParsePushBody(std::string_view body, listener::events::EventParser& parser);

// A stream name (?app= or X-Spark-App-Id): 1..200 characters of [A-Za-z0-9._:@/+-], so that it is
// safe in keys and logs. The error says what is wrong.
Result<std::string> ValidateStreamName(std::string_view name);

// The %-decoded value of `name` in a URL query ("a=1&app=x%2Fy"), or nullopt when absent. '+'
// stays '+' (the names allowed never contain spaces). A malformed escape gives an empty value.
std::optional<std::string> QueryParameter(std::string_view query, std::string_view name);

}  // namespace sparktrace::feed
