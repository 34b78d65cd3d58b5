#include "traceview/otlp_json.h"

#include <nlohmann/json.hpp>

#include "tracing/attribute_json.h"

namespace sparktrace::traceview {
namespace {

using nlohmann::ordered_json;

ordered_json AnyValue(const tracing::AttributeValue& value) {
  struct Visitor {
    ordered_json operator()(const std::string& text) const { return {{"stringValue", text}}; }
    // The protobuf JSON mapping writes 64-bit integers as strings.
    ordered_json operator()(std::int64_t number) const { return {{"intValue", std::to_string(number)}}; }
    ordered_json operator()(double number) const { return {{"doubleValue", number}}; }
    ordered_json operator()(bool flag) const { return {{"boolValue", flag}}; }
    ordered_json operator()(const std::vector<std::string>& list) const {
      ordered_json values = ordered_json::array();
      for (const std::string& item : list) values.push_back({{"stringValue", item}});
      return {{"arrayValue", {{"values", std::move(values)}}}};
    }
  };
  return std::visit(Visitor{}, value);
}

ordered_json KeyValues(const std::vector<tracing::Attribute>& attributes) {
  ordered_json list = ordered_json::array();
  for (const tracing::Attribute& attribute : attributes) {
    list.push_back({{"key", attribute.key}, {"value", AnyValue(attribute.value)}});
  }
  return list;
}

ordered_json SpanJson(const tracing::Span& span) {
  ordered_json events = ordered_json::array();
  for (const tracing::SpanEvent& event : span.events) {
    events.push_back({{"timeUnixNano", std::to_string(event.time_unix_nano)},
                      {"name", event.name},
                      {"attributes", KeyValues(event.attributes)}});
  }
  ordered_json json = {
      {"traceId", tracing::ToHex(span.trace_id)},
      {"spanId", tracing::ToHex(span.span_id)},
      {"parentSpanId", tracing::IsValid(span.parent_span_id) ? tracing::ToHex(span.parent_span_id) : ""},
      {"name", span.name},
      {"kind", static_cast<int>(span.kind)},
      {"startTimeUnixNano", std::to_string(span.start_time_unix_nano)},
      {"endTimeUnixNano", std::to_string(span.end_time_unix_nano)},
      {"attributes", KeyValues(span.attributes)},
      {"events", std::move(events)},
      {"status", {{"code", static_cast<int>(span.status_code)}, {"message", span.status_message}}}};
  if (!span.trace_state.empty()) json["traceState"] = span.trace_state;
  return json;
}

}  // namespace

std::string OtlpJson(std::span<const tracing::Span> spans) {
  ordered_json span_list = ordered_json::array();
  for (const tracing::Span& span : spans) span_list.push_back(SpanJson(span));
  const ordered_json request = {
      {"resourceSpans",
       ordered_json::array(
           {{{"resource",
              {{"attributes", ordered_json::array(
                                  {{{"key", "service.name"}, {"value", {{"stringValue", "sparktrace"}}}}})}}},
             {"scopeSpans", ordered_json::array({{{"scope", {{"name", "sparktrace"}}},
                                                  {"spans", std::move(span_list)}}})}}})}};
  return tracing::DumpJson(request);
}

}  // namespace sparktrace::traceview
