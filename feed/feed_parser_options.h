#pragma once
// How the feeds (followed logs and pushed events) parse event lines: with the SQL executions' plans
// and operator metrics (EventParserOptions::sql_metrics), which the spark.sql.execution spans carry
// (listener/correlate/sql_execution_span.h). Their cost on the parser's throughput is measured by
// bench/listener_parse_bench.cc (sparktrace_in_place vs sparktrace_in_place_sql).

#include "listener/events/event_parser.h"

namespace sparktrace::feed {

inline listener::events::EventParserOptions FeedParserOptions() {
  listener::events::EventParserOptions options;
  options.sql_metrics = true;
  return options;
}

}  // namespace sparktrace::feed
