#include "tracing/airflow_task_report.h"

#include <simdjson.h>

#include <array>
#include <string>
#include <utility>

#include "common/json_writer.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing {
namespace {

Error FieldError(std::string_view field, std::string_view problem) {
  return InvalidArgument(std::string(field) + ": " + std::string(problem));
}

bool IsPrintableAscii(std::string_view text) {
  for (const char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

bool IsStateWord(std::string_view state) {
  if (state.empty() || state.size() > kMaxAirflowStateLength) return false;
  for (const char c : state) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

// Parses into a buffer with simdjson's padding: a body from the admin port has none.
simdjson::error_code ParseObject(simdjson::dom::parser& parser, std::string_view json,
                                 simdjson::dom::object& object) {
  std::string padded(json);
  padded.resize(json.size() + simdjson::SIMDJSON_PADDING, '\0');
  simdjson::dom::element root;
  if (auto error = parser.parse(padded.data(), json.size(), /*realloc_if_needed=*/true).get(root); error) {
    return error;
  }
  return root.get_object().get(object);
}

// A string field: nullopt when absent; an error when present but not a string.
Result<std::optional<std::string>> OptionalString(simdjson::dom::object object, std::string_view field) {
  simdjson::dom::element element;
  if (object.at_key(field).get(element) != simdjson::SUCCESS) return std::optional<std::string>();
  if (element.is_null()) return std::optional<std::string>();
  std::string_view value;
  if (element.get_string().get(value) != simdjson::SUCCESS) return FieldError(field, "must be a string");
  return std::optional<std::string>(std::string(value));
}

// An integer field: nullopt when absent; an error when present but not an integer in range.
Result<std::optional<std::int64_t>> OptionalInteger(simdjson::dom::object object, std::string_view field) {
  simdjson::dom::element element;
  if (object.at_key(field).get(element) != simdjson::SUCCESS) return std::optional<std::int64_t>();
  std::int64_t value = 0;
  if (element.get_int64().get(value) != simdjson::SUCCESS) {
    return FieldError(field, "must be an integer");
  }
  return std::optional<std::int64_t>(value);
}

Result<std::uint64_t> RequiredTime(simdjson::dom::object object, std::string_view field) {
  simdjson::dom::element element;
  if (object.at_key(field).get(element) != simdjson::SUCCESS) return FieldError(field, "is required");
  std::uint64_t value = 0;
  if (element.get_uint64().get(value) != simdjson::SUCCESS || value == 0 || value > kMaxReportUnixNano) {
    return FieldError(field, "must be a positive integer of nanoseconds since the epoch, at most 2^63 - 1");
  }
  return value;
}

// The five identity fields, checked by the rules the x-airflow-* headers follow (one validator for
// both ways in: a report names exactly the attempt its calls did).
Result<AirflowIdentity> ReadIdentity(simdjson::dom::object object) {
  auto dag_id = OptionalString(object, "dag_id");
  if (!dag_id.ok()) return dag_id.error();
  auto task_id = OptionalString(object, "task_id");
  if (!task_id.ok()) return task_id.error();
  auto run_id = OptionalString(object, "run_id");
  if (!run_id.ok()) return run_id.error();
  auto try_number = OptionalInteger(object, "try_number");
  if (!try_number.ok()) return try_number.error();
  auto map_index = OptionalInteger(object, "map_index");
  if (!map_index.ok()) return map_index.error();
  if (!*dag_id) return FieldError("dag_id", "is required");
  if (!*task_id) return FieldError("task_id", "is required");

  const std::string run_text = run_id->value_or("");
  const std::string try_text = *try_number ? std::to_string(**try_number) : "1";
  const std::string map_text = *map_index ? std::to_string(**map_index) : "-1";
  const std::array<MetadataEntry, 5> headers = {{{kAirflowDagIdHeader, **dag_id},
                                                 {kAirflowTaskIdHeader, **task_id},
                                                 {kAirflowRunIdHeader, run_text},
                                                 {kAirflowTryNumberHeader, try_text},
                                                 {kAirflowMapIndexHeader, map_text}}};
  const AirflowIdentityParse parsed = ParseAirflowIdentity(headers);
  if (parsed.identity) return *parsed.identity;
  switch (parsed.error.value_or(AirflowIdentityError::kIncomplete)) {
    case AirflowIdentityError::kBadDagId:
    case AirflowIdentityError::kIncomplete:
      return FieldError("dag_id", "must be 1 to 250 printable ASCII characters without spaces");
    case AirflowIdentityError::kBadTaskId:
      return FieldError("task_id", "must be 1 to 250 printable ASCII characters without spaces");
    case AirflowIdentityError::kBadRunId:
      return FieldError("run_id", "must be at most 250 printable ASCII characters");
    case AirflowIdentityError::kBadTryNumber:
      return FieldError("try_number", "must be in [0, 2^31-1]");
    case AirflowIdentityError::kBadMapIndex:
      return FieldError("map_index", "must be -1 or in [0, 2^31-1]");
    case AirflowIdentityError::kDuplicateHeader:
      break;  // one value per field in JSON
  }
  return FieldError("dag_id", "invalid identity");
}

// An optional printable string of at most `limit` characters; "" when absent.
Result<std::string> BoundedText(simdjson::dom::object object, std::string_view field, std::size_t limit) {
  auto value = OptionalString(object, field);
  if (!value.ok()) return value.error();
  if (!*value) return std::string();
  if ((*value)->size() > limit || !IsPrintableAscii(**value)) {
    return FieldError(field, "must be at most " + std::to_string(limit) + " printable ASCII characters");
  }
  return std::move(**value);
}

}  // namespace

Result<void> CheckReportEndIsPlausible(const AirflowTaskReport& report, std::uint64_t now_unix_nano) {
  if (report.end_unix_nano > now_unix_nano &&
      report.end_unix_nano - now_unix_nano > kMaxReportClockSkewNanos) {
    return FieldError("end_time_unix_nano", "is more than a day after this proxy's clock");
  }
  return {};
}

Result<AirflowTaskReport> ParseAirflowTaskReport(std::string_view json) {
  if (json.size() > kMaxAirflowTaskReportBytes) {
    return InvalidArgument("a report is at most " + std::to_string(kMaxAirflowTaskReportBytes) + " bytes");
  }
  simdjson::dom::parser parser;
  simdjson::dom::object object;
  if (ParseObject(parser, json, object) != simdjson::SUCCESS) {
    return InvalidArgument("the body must be one JSON object");
  }
  AirflowTaskReport report;
  auto identity = ReadIdentity(object);
  if (!identity.ok()) return identity.error();
  report.identity = std::move(*identity);

  auto state = OptionalString(object, "state");
  if (!state.ok()) return state.error();
  if (!*state || !IsStateWord(**state)) {
    return FieldError("state", "is required: Airflow's task state, 1 to 32 of a-z and _");
  }
  report.state = std::move(**state);

  auto operator_class = BoundedText(object, "operator", kMaxOperatorLength);
  if (!operator_class.ok()) return operator_class.error();
  report.operator_class = std::move(*operator_class);
  auto hostname = BoundedText(object, "hostname", kMaxHostnameLength);
  if (!hostname.ok()) return hostname.error();
  report.hostname = std::move(*hostname);
  auto version = BoundedText(object, "airflow_version", kMaxAirflowVersionLength);
  if (!version.ok()) return version.error();
  report.airflow_version = std::move(*version);

  auto start = RequiredTime(object, "start_time_unix_nano");
  if (!start.ok()) return start.error();
  auto end = RequiredTime(object, "end_time_unix_nano");
  if (!end.ok()) return end.error();
  if (*end < *start) return FieldError("end_time_unix_nano", "must not be before start_time_unix_nano");
  report.start_unix_nano = *start;
  report.end_unix_nano = *end;

  auto traceparent = OptionalString(object, "traceparent");
  if (!traceparent.ok()) return traceparent.error();
  if (*traceparent) {
    const TraceparentResult parsed = ParseTraceparent(**traceparent);
    if (!parsed.ok()) {
      return FieldError("traceparent", "is not a valid W3C traceparent (" +
                                           std::string(TraceparentErrorName(parsed.error())) + ")");
    }
    report.traceparent = *parsed;
    auto tracestate = OptionalString(object, "tracestate");
    if (!tracestate.ok()) return tracestate.error();
    if (*tracestate && !(*tracestate)->empty()) {
      if (const auto error = ValidateTracestate(**tracestate)) {
        return FieldError("tracestate",
                          "is not a valid W3C tracestate (" + std::string(TracestateErrorName(*error)) + ")");
      }
      report.tracestate = std::move(**tracestate);
    }
  }
  return report;
}

std::string AirflowTaskReportJson(const AirflowTaskReport& report) {
  JsonWriter out;
  out.BeginObject();
  out.Key("dag_id").String(report.identity.dag_id).Key("task_id").String(report.identity.task_id);
  out.Key("run_id").String(report.identity.run_id).Key("try_number").Int(report.identity.try_number);
  out.Key("map_index").Int(report.identity.map_index).Key("state").String(report.state);
  if (!report.operator_class.empty()) out.Key("operator").String(report.operator_class);
  if (!report.hostname.empty()) out.Key("hostname").String(report.hostname);
  if (!report.airflow_version.empty()) out.Key("airflow_version").String(report.airflow_version);
  out.Key("start_time_unix_nano").Int(static_cast<std::int64_t>(report.start_unix_nano));
  out.Key("end_time_unix_nano").Int(static_cast<std::int64_t>(report.end_unix_nano));
  if (report.traceparent) {
    out.Key("traceparent")
        .String(FormatTraceparent(report.traceparent->trace_id, report.traceparent->parent_span_id,
                                  report.traceparent->sampled()));
    if (!report.tracestate.empty()) out.Key("tracestate").String(report.tracestate);
  }
  out.EndObject();
  return out.Take();
}

TaskSpanContext TaskSpanContextOf(const AirflowTaskReport& report) {
  TaskSpanContext context;
  if (report.traceparent) {
    context.trace_id = report.traceparent->trace_id;
    context.parent_sampled = report.traceparent->sampled();
    context.tracestate = report.tracestate;
    const SpanId derived = DeriveTaskSpanId(report.identity);
    const SpanId& named = report.traceparent->parent_span_id;
    if (report.identity.map_index >= 0 && named != derived) {
      context.span_id = derived;
      context.parent_span_id = named;
      context.own_span_id = true;
    } else {
      // The plugin sends the derived ids themselves when Airflow has no span context of its own.
      context.span_id = named;
      context.own_span_id = named == derived && context.trace_id == DeriveTraceId(report.identity);
    }
    return context;
  }
  context.trace_id = DeriveTraceId(report.identity);
  context.span_id = DeriveTaskSpanId(report.identity);
  context.own_span_id = true;
  return context;
}

Span MakeAirflowTaskSpan(const AirflowTaskReport& report, const TaskSpanContext& context) {
  Span span;
  span.trace_id = context.trace_id;
  span.span_id = context.span_id;
  span.parent_span_id = context.parent_span_id;
  span.trace_state = context.tracestate;
  span.name = std::string(kAirflowTaskSpanName);
  span.kind = SpanKind::kInternal;
  span.start_time_unix_nano = report.start_unix_nano;
  span.end_time_unix_nano = report.end_unix_nano;
  span.attributes = ToAttributes(report.identity);
  span.attributes.push_back({std::string(kAirflowTaskStateKey), report.state});
  if (!report.operator_class.empty()) {
    span.attributes.push_back({std::string(kAirflowTaskOperatorKey), report.operator_class});
  }
  if (!report.hostname.empty())
    span.attributes.push_back({std::string(kAirflowTaskHostnameKey), report.hostname});
  if (!report.airflow_version.empty()) {
    span.attributes.push_back({std::string(kAirflowVersionKey), report.airflow_version});
  }
  span.attributes.push_back(
      {std::string(tracing::kTraceOriginKey), std::string(report.traceparent ? "client" : "airflow")});
  if (report.state == "failed" || report.state == "up_for_retry" || report.state == "upstream_failed") {
    span.status_code = StatusCode::kError;
    span.status_message = "Airflow task " + report.state;
  }
  return span;
}

}  // namespace sparktrace::tracing
