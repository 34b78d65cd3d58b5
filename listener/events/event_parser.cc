#include "listener/events/event_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "listener/events/event_readers.h"
#include "listener/events/event_type.h"
#include "listener/events/json_field_reader.h"

namespace sparktrace::listener::events {

static_assert(kEventLinePadding == simdjson::SIMDJSON_PADDING, "kEventLinePadding must match simdjson");

namespace {

namespace ondemand = simdjson::ondemand;
using json::error_code;
using json::FieldRange;
using json::ReadFailure;

// simdjson's default nesting limit (1024) would reject a plan about 500 operators deep; a
// "sparkPlanInfo" level is two JSON levels (the node and its "children" array). Deeper operators
// than kMaxPlanDepth are skipped, not decoded.
constexpr std::size_t kMaxJsonDepth = 2 * kMaxPlanDepth + 64;

// Names from the line end up in error messages; a hostile line must not make them huge.
constexpr std::size_t kMaxNameInMessage = 128;

std::string Quoted(std::string_view text) {
  std::string quoted = "\"";
  quoted += Utf8Prefix(text, kMaxNameInMessage);
  quoted += '"';
  return quoted;
}

Error Malformed(std::string_view event_type, error_code code) {
  std::string message;
  if (!event_type.empty()) {
    message += Utf8Prefix(event_type, kMaxNameInMessage);
    message += ": ";
  }
  message += "malformed JSON: ";
  message += simdjson::error_message(code);
  return InvalidArgument(std::move(message));
}

Error FieldError(std::string_view event_type, const ReadFailure& failure, error_code code) {
  if (failure.field.empty()) return Malformed(event_type, code);
  std::string message(Utf8Prefix(event_type, kMaxNameInMessage));
  if (code == simdjson::NO_SUCH_FIELD) {
    message += ": missing required field ";
    message += Quoted(failure.field);
  } else {
    message += ": field ";
    message += Quoted(failure.field);
    message += ": ";
    message += simdjson::error_message(code);
  }
  return InvalidArgument(std::move(message));
}

// One object per line: anything after it (a second object, garbage) makes the line malformed.
// simdjson 3.0 has no document::at_end(); current_location() answers OUT_OF_BOUNDS exactly when
// the iterator is past the last token.
error_code CheckDocumentEnd(ondemand::document& document) {
  return document.current_location().error() == simdjson::OUT_OF_BOUNDS ? simdjson::SUCCESS
                                                                        : simdjson::TRAILING_CONTENT;
}

// Reads the fields after "Event" with `read`, then checks the line ends with the object.
template <typename Event, typename Reader>
Result<SparkEvent> ReadEvent(ondemand::document& document, FieldRange fields, std::string_view event_type,
                             Event event, Reader&& read) {
  ReadFailure failure;
  if (error_code error = read(fields, failure, event)) return FieldError(event_type, failure, error);
  if (error_code error = CheckDocumentEnd(document)) return Malformed(event_type, error);
  return SparkEvent(std::move(event));
}

// Walks the rest of an unmodelled event, so a broken line is reported as broken whatever its type.
Result<SparkEvent> IgnoreEvent(ondemand::document& document, FieldRange fields, std::string_view event_type) {
  ReadFailure failure;
  if (error_code visit_error = json::VisitFields(
          fields, failure, [](std::string_view, ondemand::value&) { return simdjson::SUCCESS; })) {
    return Malformed(event_type, visit_error);
  }
  if (error_code error = CheckDocumentEnd(document)) return Malformed(event_type, error);
  return SparkEvent(IgnoredEvent{std::string(event_type)});
}

ConnectOperationEvent OperationIn(ConnectOperationPhase phase) {
  ConnectOperationEvent event;
  event.phase = phase;
  return event;
}

ConnectSessionEvent SessionIn(ConnectSessionPhase phase) {
  ConnectSessionEvent event;
  event.phase = phase;
  return event;
}

}  // namespace

struct EventParser::State {
  explicit State(EventParserOptions parser_options)
      : options(parser_options), parser(parser_options.max_line_bytes) {
    // Sets the nesting limit; buffers grow to the longest line later. Should this fail (memory),
    // the default limit stays and deep plans fail as malformed lines.
    if (parser.allocate(0, kMaxJsonDepth) != simdjson::SUCCESS) return;
  }

  Result<SparkEvent> ParseInPlace(std::string_view line, std::size_t readable_bytes);
  Result<SparkEvent> Dispatch(ondemand::document& document, FieldRange fields, std::string_view event_type);
  std::string_view CopyToPaddedBuffer(std::string_view line);
  // 0 when plans are not wanted (json::ReadSqlExecutionStart skips them then).
  std::size_t PlanNodesToRead() const { return options.sql_metrics ? options.max_plan_nodes : 0; }

  EventParserOptions options;
  ondemand::parser parser;
  // Padded copies of lines handed over without padding; grows, never shrinks.
  std::unique_ptr<char[]> padded_buffer;
  std::size_t padded_buffer_size = 0;
};

std::string_view EventParser::State::CopyToPaddedBuffer(std::string_view line) {
  const std::size_t needed = line.size() + kEventLinePadding;
  if (needed > padded_buffer_size) {
    const std::size_t size = std::max(needed, padded_buffer_size * 2);
    padded_buffer = std::make_unique_for_overwrite<char[]>(size);
    padded_buffer_size = size;
  }
  if (!line.empty()) std::memcpy(padded_buffer.get(), line.data(), line.size());
  std::memset(padded_buffer.get() + line.size(), 0, kEventLinePadding);
  return {padded_buffer.get(), line.size()};
}

Result<SparkEvent> EventParser::State::ParseInPlace(std::string_view line, std::size_t readable_bytes) {
  ondemand::document document;
  if (error_code error = parser.iterate(line.data(), line.size(), readable_bytes).get(document)) {
    return Malformed({}, error);
  }
  ondemand::object object;
  if (document.get_object().get(object) != simdjson::SUCCESS) {
    return InvalidArgument("malformed JSON: the line is not a JSON object");
  }
  FieldRange fields;
  if (error_code error = json::FieldsOf(object, fields)) return Malformed({}, error);
  if (fields.next == fields.end) return InvalidArgument("no \"Event\" field");

  ondemand::field first;
  std::string_view first_key;
  if (error_code error = (*fields.next).get(first)) return Malformed({}, error);
  if (error_code error = first.unescaped_key().get(first_key)) return Malformed({}, error);
  if (first_key == "Event") {
    // Spark always writes "Event" first: read on from here, one pass over the line.
    std::string_view event_type;
    if (first.value().get_string().get(event_type) != simdjson::SUCCESS) {
      return InvalidArgument("\"Event\" is not a string");
    }
    ++fields.next;
    return Dispatch(document, fields, event_type);
  }

  // Hand-written or re-serialised lines (e.g. sorted keys): find "Event", then start over. The
  // name is copied because rewinding reuses the parser's string buffer.
  std::string event_type;
  {
    document.rewind();
    std::string_view found;
    if (document.find_field_unordered("Event").get_string().get(found) != simdjson::SUCCESS) {
      return InvalidArgument("no \"Event\" field");
    }
    event_type.assign(found);
  }
  document.rewind();
  if (error_code error = document.get_object().get(object)) return Malformed(event_type, error);
  if (error_code error = json::FieldsOf(object, fields)) return Malformed(event_type, error);
  return Dispatch(document, fields, event_type);
}

Result<SparkEvent> EventParser::State::Dispatch(ondemand::document& document, FieldRange fields,
                                                std::string_view event_type) {
  if (event_type.empty()) return InvalidArgument("empty \"Event\"");
  switch (EventTypeFromName(event_type)) {
    case EventType::kTaskEnd:
      return ReadEvent(document, fields, event_type, TaskEnd{},
                       [this](FieldRange range, ReadFailure& failure, TaskEnd& out) {
                         return json::ReadTaskEnd(range, failure, options.sql_metrics, out);
                       });
    case EventType::kTaskStart:
      return ReadEvent(document, fields, event_type, TaskStart{}, json::ReadTaskStart);
    case EventType::kStageSubmitted:
      return ReadEvent(document, fields, event_type, StageSubmitted{},
                       [](FieldRange range, ReadFailure& failure, StageSubmitted& out) {
                         return json::ReadStageEvent(range, failure, out.stage);
                       });
    case EventType::kStageCompleted:
      return ReadEvent(document, fields, event_type, StageCompleted{},
                       [](FieldRange range, ReadFailure& failure, StageCompleted& out) {
                         return json::ReadStageEvent(range, failure, out.stage);
                       });
    case EventType::kJobStart:
      return ReadEvent(document, fields, event_type, JobStart{}, json::ReadJobStart);
    case EventType::kJobEnd:
      return ReadEvent(document, fields, event_type, JobEnd{}, json::ReadJobEnd);
    case EventType::kExecutorAdded:
      return ReadEvent(document, fields, event_type, ExecutorAdded{}, json::ReadExecutorAdded);
    case EventType::kExecutorRemoved:
      return ReadEvent(document, fields, event_type, ExecutorRemoved{}, json::ReadExecutorRemoved);
    case EventType::kApplicationStart:
      return ReadEvent(document, fields, event_type, ApplicationStart{}, json::ReadApplicationStart);
    case EventType::kApplicationEnd:
      return ReadEvent(document, fields, event_type, ApplicationEnd{}, json::ReadApplicationEnd);
    case EventType::kLogStart:
      return ReadEvent(document, fields, event_type, LogStart{}, json::ReadLogStart);
    case EventType::kEnvironmentUpdate:
      return ReadEvent(document, fields, event_type, EnvironmentUpdate{}, json::ReadEnvironmentUpdate);
    case EventType::kSqlExecutionStart:
      return ReadEvent(document, fields, event_type, SqlExecutionStart{},
                       [this](FieldRange range, ReadFailure& failure, SqlExecutionStart& out) {
                         return json::ReadSqlExecutionStart(range, failure, PlanNodesToRead(), out);
                       });
    case EventType::kSqlExecutionEnd:
      return ReadEvent(document, fields, event_type, SqlExecutionEnd{}, json::ReadSqlExecutionEnd);
    case EventType::kSqlAdaptiveExecutionUpdate:
      if (!options.sql_metrics) break;
      return ReadEvent(document, fields, event_type, SqlAdaptiveExecutionUpdate{},
                       [this](FieldRange range, ReadFailure& failure, SqlAdaptiveExecutionUpdate& out) {
                         return json::ReadSqlAdaptiveExecutionUpdate(range, failure, options.max_plan_nodes,
                                                                     out);
                       });
    case EventType::kSqlAdaptiveMetricUpdates:
      if (!options.sql_metrics) break;
      return ReadEvent(document, fields, event_type, SqlAdaptiveMetricUpdates{},
                       json::ReadSqlAdaptiveMetricUpdates);
    case EventType::kDriverAccumUpdates:
      if (!options.sql_metrics) break;
      return ReadEvent(document, fields, event_type, DriverAccumUpdates{}, json::ReadDriverAccumUpdates);
    case EventType::kConnectSessionStarted:
      return ReadEvent(document, fields, event_type, SessionIn(ConnectSessionPhase::kStarted),
                       json::ReadConnectSessionEvent);
    case EventType::kConnectSessionClosed:
      return ReadEvent(document, fields, event_type, SessionIn(ConnectSessionPhase::kClosed),
                       json::ReadConnectSessionEvent);
    case EventType::kConnectOperationStarted:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kStarted),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationAnalyzed:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kAnalyzed),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationReadyForExecution:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kReadyForExecution),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationFinished:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kFinished),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationFailed:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kFailed),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationCanceled:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kCanceled),
                       json::ReadConnectOperationEvent);
    case EventType::kConnectOperationClosed:
      return ReadEvent(document, fields, event_type, OperationIn(ConnectOperationPhase::kClosed),
                       json::ReadConnectOperationEvent);
    case EventType::kNotModelled:
      break;
  }
  return IgnoreEvent(document, fields, event_type);
}

EventParser::EventParser(EventParserOptions options) : state_(std::make_unique<State>(options)) {}
EventParser::~EventParser() = default;
EventParser::EventParser(EventParser&&) noexcept = default;
EventParser& EventParser::operator=(EventParser&&) noexcept = default;

Result<SparkEvent> EventParser::Parse(std::string_view line) { return Parse(line, 0); }

Result<SparkEvent> EventParser::Parse(std::string_view line, std::size_t readable_bytes) {
  if (line.size() > state_->options.max_line_bytes) {
    return InvalidArgument("line of " + std::to_string(line.size()) + " bytes is longer than the limit of " +
                           std::to_string(state_->options.max_line_bytes));
  }
  // Lines come from files and peers: an allocation failure on a huge one is that line's error,
  // never an exception out of the parser.
  try {
    if (readable_bytes < line.size() || readable_bytes - line.size() < kEventLinePadding) {
      const std::string_view copy = state_->CopyToPaddedBuffer(line);
      return state_->ParseInPlace(copy, copy.size() + kEventLinePadding);
    }
    return state_->ParseInPlace(line, readable_bytes);
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kInternal,
                 "out of memory parsing a line of " + std::to_string(line.size()) + " bytes"};
  }
}

Result<SparkEvent> ParseEvent(std::string_view line) {
  thread_local EventParser parser;
  return parser.Parse(line);
}

}  // namespace sparktrace::listener::events
