#pragma once
// How the feeds (followed logs and pushed events) parse event lines. They do not use the SQL
// operator metrics yet (a later step of issue 31 puts them on spans), so they do not pay for
// reading them: EventParserOptions::sql_metrics costs 15 % of the parser's throughput on the
// benchmark corpus (bench/listener_parse_bench.cc, sparktrace_in_place vs sparktrace_in_place_sql).

#include "listener/events/event_parser.h"

namespace sparktrace::feed {

inline listener::events::EventParserOptions FeedParserOptions() {
  listener::events::EventParserOptions options;
  options.sql_metrics = false;
  return options;
}

}  // namespace sparktrace::feed
