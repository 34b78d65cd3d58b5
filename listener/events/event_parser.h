#pragma once
// EventParser: one Spark event-log line (one JSON object, Spark 1.2 to 4.x) → SparkEvent.
//
// A line gives one of three answers, and never throws or crashes, whatever its bytes:
//   * a modelled event (TaskEnd, JobStart, ConnectOperationEvent, ...; see spark_event.h);
//   * IgnoredEvent{type}: valid, but of a type the model does not need or does not know;
//   * an Error (kInvalidArgument): malformed JSON, no "Event", a required field missing or of the
//     wrong type, or content after the object. The message names the event type and the field.
//     Callers count such lines and go on ("a corrupt event-log line is counted and skipped").
// Validation: the line's structure, UTF-8 and every field read are checked; values that are
// skipped are only checked for balanced brackets and quotes (simdjson On Demand).
//
// Reading in place: simdjson reads whole 64-byte blocks, so it may read up to kEventLinePadding
// bytes past a line's end. A reader that keeps a chunk of the log in one buffer with
// kEventLinePadding spare bytes at its end can pass each line with Parse(line, readable_bytes)
// and nothing is copied; otherwise the line is copied into an internal padded buffer.
//
// Threading: an EventParser is not thread-safe; use one per thread. ParseEvent() keeps one per
// thread. The parser owns simdjson's reusable buffers: they grow to the longest line parsed (at
// most max_line_bytes, plus simdjson's index of it) and are kept for the parser's lifetime.

#include <cstddef>
#include <memory>
#include <string_view>

#include "common/result.h"
#include "listener/events/spark_event.h"

namespace sparktrace::listener::events {

// Readable bytes a line must be followed by to be parsed in place (simdjson's SIMDJSON_PADDING).
inline constexpr std::size_t kEventLinePadding = 64;

struct EventParserOptions {
  // Longer lines are rejected unparsed; this bounds the parser's memory. The longest line in the
  // real test logs is 1 MiB (an AQE plan update of a Databricks query).
  std::size_t max_line_bytes = std::size_t{256} << 20;
  // Operators kept of one physical plan ("sparkPlanInfo" of SQLExecutionStart and of each AQE
  // update), in pre-order; the rest are counted in SqlPlan::dropped_nodes. Bounds a plan's memory;
  // a 10,000-operator plan is kept whole. `sparktrace diagnose --sql-max-plan-nodes`.
  std::size_t max_plan_nodes = 20000;
  // Whether to read what only the SQL operator metrics need: "sparkPlanInfo" trees, the AQE and
  // driver metric events, and each task's non-internal accumulables. They cost 12 % of the parser's
  // throughput on the benchmark corpus (docs/diagnose-sql.md "Cost"; Photon: 100+ per task), so a
  // reader that does not use them turns them off (every reader of ours uses them today, the live
  // feeds too: feed/feed_parser_options.h): plans stay nullopt, those events are ignored, tasks
  // keep no AccumulableUpdate.
  bool sql_metrics = true;
};

class EventParser {
 public:
  explicit EventParser(EventParserOptions options = {});
  ~EventParser();
  // A moved-from parser may only be destroyed or assigned to.
  EventParser(EventParser&&) noexcept;
  EventParser& operator=(EventParser&&) noexcept;
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  // Parses one line, without its '\n' (a trailing '\r' or other whitespace is fine). Copies the
  // line into the parser's padded buffer first.
  Result<SparkEvent> Parse(std::string_view line);

  // Parses one line in place when `readable_bytes`, the number of bytes that may be read from
  // line.data() on, is at least line.size() + kEventLinePadding; copies it like Parse(line)
  // otherwise. The padding's content does not matter.
  Result<SparkEvent> Parse(std::string_view line, std::size_t readable_bytes);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// EventParser::Parse(line) with a parser kept per thread (thread_local, default options).
Result<SparkEvent> ParseEvent(std::string_view line);

}  // namespace sparktrace::listener::events
