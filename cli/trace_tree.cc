#include "cli/trace_tree.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "tracing/airflow_task_report.h"
#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"

namespace sparktrace::cli {
namespace {

using tracing::Attribute;
using tracing::AttributesToJson;
using tracing::AttributeValue;
using tracing::DumpJsonPretty;
using tracing::Span;
using tracing::SpanEvent;
using tracing::SpanKind;
using tracing::SpanId;
using tracing::StatusCode;
using tracing::IsValid;
using tracing::ToHex;

constexpr std::uint64_t kMicro = 1'000;
constexpr std::uint64_t kMilli = 1'000'000;
constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kMinute = 60 * kSecond;
constexpr std::uint64_t kHour = 60 * kMinute;

constexpr int kOffsetWidth = 9;
constexpr int kDurationWidth = 8;

// The attributes a span's text line shows, in this order, with their short labels.
struct KeyAttribute {
  std::string_view key;
  std::string_view label;
  bool top_level_only = false;  // the same on every span of a trace: said once, at the top
};
constexpr KeyAttribute kKeyAttributes[] = {
    {tracing::kSparkConnectOperationIdKey, "op"},    {tracing::kSparkConnectOperationOutcomeKey, "outcome"},
    {tracing::kSparkConnectResponseRowsKey, "rows"}, {tracing::kSparkConnectResponseBytesKey, "bytes"},
    {tracing::kAirflowDagIdKey, "dag", true},        {tracing::kAirflowTaskIdKey, "task", true},
    {tracing::kAirflowRunIdKey, "run", true},        {tracing::kAirflowTryNumberKey, "try", true},
    {tracing::kAirflowTaskStateKey, "airflow"},      {tracing::kAirflowTaskOperatorKey, "operator"},
};

std::string_view KindName(SpanKind kind) {
  switch (kind) {
    case SpanKind::kUnspecified:
      return "unspecified";
    case SpanKind::kInternal:
      return "internal";
    case SpanKind::kServer:
      return "server";
    case SpanKind::kClient:
      return "client";
    case SpanKind::kProducer:
      return "producer";
    case SpanKind::kConsumer:
      return "consumer";
  }
  return "unspecified";
}

std::string_view StatusName(StatusCode code) {
  switch (code) {
    case StatusCode::kUnset:
      return "unset";
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kError:
      return "error";
  }
  return "unset";
}

// Value with three significant digits in `unit`, truncated: "1.23", "12.3", "123".
std::string ThreeDigits(std::uint64_t nanos, std::uint64_t unit, std::string_view suffix) {
  const std::uint64_t whole = nanos / unit;
  if (whole >= 100) return fmt::format("{}{}", whole, suffix);
  if (whole >= 10) return fmt::format("{}.{}{}", whole, nanos % unit * 10 / unit, suffix);
  return fmt::format("{}.{:02}{}", whole, nanos % unit * 100 / unit, suffix);
}

std::uint64_t DurationOf(const Span& span) {
  return span.end_time_unix_nano > span.start_time_unix_nano
             ? span.end_time_unix_nano - span.start_time_unix_nano
             : 0;
}

// Display width in code points, which is what a terminal shows for the text we print ("µ" is two bytes).
std::size_t DisplayWidth(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(
      text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string PadLeft(std::string_view text, std::size_t width) {
  const std::size_t shown = DisplayWidth(text);
  return std::string(shown < width ? width - shown : 0, ' ') + std::string(text);
}

std::string PadRight(std::string_view text, std::size_t width) {
  const std::size_t shown = DisplayWidth(text);
  return std::string(text) + std::string(shown < width ? width - shown : 0, ' ');
}

// Values with spaces or quotes, or empty ones, are quoted so that "key=value" stays readable.
std::string QuoteIfNeeded(std::string_view text) {
  const bool plain = !text.empty() && text.find_first_of(" \t\n\"\\") == std::string_view::npos;
  if (plain) return std::string(text);
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (c == '\n') {
      quoted += "\\n";
      continue;
    }
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string ValueText(const AttributeValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          return QuoteIfNeeded(v);
        } else if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::vector<std::string>>) {
          return QuoteIfNeeded(fmt::format("{}", fmt::join(v, ",")));
        } else {
          return fmt::format("{}", v);
        }
      },
      value);
}

std::string SpanDetails(const TraceTreeRow& row) {
  const Span& span = *row.span;
  std::vector<std::string> items;
  for (const auto& [key, label, top_level_only] : kKeyAttributes) {
    if (top_level_only && row.depth > 0) continue;
    // The last value of a repeated key wins, as in the stored JSON.
    auto found = std::find_if(span.attributes.rbegin(), span.attributes.rend(),
                              [key = key](const Attribute& attribute) { return attribute.key == key; });
    if (found != span.attributes.rend())
      items.push_back(fmt::format("{}={}", label, ValueText(found->value)));
  }
  if (span.status_code == StatusCode::kError) {
    items.push_back(span.status_message.empty() ? "error" : "error: " + QuoteIfNeeded(span.status_message));
  }
  if (row.orphan) items.push_back(fmt::format("[parent {} missing]", ToHex(span.parent_span_id)));
  if (items.empty()) return "";
  return fmt::format("  {}", fmt::join(items, " "));
}

struct TraceBounds {
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t errors = 0;
};

TraceBounds BoundsOf(std::span<const Span> spans) {
  TraceBounds bounds;
  if (spans.empty()) return bounds;
  bounds.start = spans.front().start_time_unix_nano;
  for (const Span& span : spans) {
    bounds.start = std::min(bounds.start, span.start_time_unix_nano);
    bounds.end = std::max(bounds.end, span.end_time_unix_nano);
    if (span.status_code == StatusCode::kError) ++bounds.errors;
  }
  bounds.end = std::max(bounds.end, bounds.start);
  return bounds;
}

std::string Plural(std::uint64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

// Unix nanoseconds as JSON: a decimal string (see the header for why), and the ISO-8601 form.
void AddTime(nlohmann::ordered_json& object, std::string_view field, std::uint64_t unix_nano) {
  object[fmt::format("{}_unix_nano", field)] = std::to_string(unix_nano);
  object[std::string(field)] = FormatUnixNanoIso8601(unix_nano, 9);
}

}  // namespace

std::vector<TraceTreeRow> OrderTraceTree(std::span<const Span> spans) {
  const auto earlier = [&spans](std::size_t a, std::size_t b) {
    const Span& x = spans[a];
    const Span& y = spans[b];
    return std::tie(x.start_time_unix_nano, x.span_id, a) < std::tie(y.start_time_unix_nano, y.span_id, b);
  };

  // The first span with an id is the one its children hang under; a repeated id (not expected from
  // one trace) is shown as a span of its own.
  std::map<SpanId, std::size_t> index_of;
  for (std::size_t i = 0; i < spans.size(); ++i) index_of.emplace(spans[i].span_id, i);

  std::vector<std::vector<std::size_t>> children(spans.size());
  std::vector<std::size_t> top_level;
  std::vector<bool> orphan(spans.size(), false);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!IsValid(spans[i].parent_span_id)) {
      top_level.push_back(i);
      continue;
    }
    auto parent = index_of.find(spans[i].parent_span_id);
    if (parent == index_of.end() || parent->second == i) {
      orphan[i] = true;
      top_level.push_back(i);
    } else {
      children[parent->second].push_back(i);
    }
  }
  for (auto& list : children) std::sort(list.begin(), list.end(), earlier);
  std::sort(top_level.begin(), top_level.end(), earlier);

  std::vector<TraceTreeRow> rows;
  rows.reserve(spans.size());
  std::vector<bool> visited(spans.size(), false);
  // Iterative depth-first walk: a long parent chain must not exhaust the stack.
  const auto walk = [&](std::size_t top) {
    std::vector<std::pair<std::size_t, int>> stack{{top, 0}};
    while (!stack.empty()) {
      const auto [index, depth] = stack.back();
      stack.pop_back();
      if (visited[index]) continue;
      visited[index] = true;
      rows.push_back(TraceTreeRow{&spans[index], depth, orphan[index]});
      const auto& kids = children[index];
      for (auto kid = kids.rbegin(); kid != kids.rend(); ++kid) stack.emplace_back(*kid, depth + 1);
    }
  };
  for (const std::size_t top : top_level) walk(top);

  // Whatever is left hangs in a parent cycle: start each cycle at its earliest span.
  std::vector<std::size_t> left;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (!visited[i]) left.push_back(i);
  }
  std::sort(left.begin(), left.end(), earlier);
  for (const std::size_t index : left) {
    if (visited[index]) continue;
    orphan[index] = true;
    walk(index);
  }
  return rows;
}

std::string FormatSpanDuration(std::uint64_t nanos) {
  if (nanos == 0) return "0s";
  if (nanos < kMicro) return fmt::format("{}ns", nanos);
  if (nanos < kMilli) return ThreeDigits(nanos, kMicro, "µs");
  if (nanos < kSecond) return ThreeDigits(nanos, kMilli, "ms");
  if (nanos < kMinute) return ThreeDigits(nanos, kSecond, "s");
  if (nanos < kHour) return fmt::format("{}m{:02}s", nanos / kMinute, nanos % kMinute / kSecond);
  return fmt::format("{}h{:02}m", nanos / kHour, nanos % kHour / kMinute);
}

std::string FormatUnixNanoIso8601(std::uint64_t unix_nano, int fraction_digits) {
  const std::uint64_t seconds = unix_nano / kSecond;
  const std::chrono::sys_days day{std::chrono::days(static_cast<std::int64_t>(seconds / 86'400))};
  const std::chrono::year_month_day date(day);
  const std::uint64_t second_of_day = seconds % 86'400;
  std::string text = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", static_cast<int>(date.year()),
                                 static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                                 second_of_day / 3600, second_of_day % 3600 / 60, second_of_day % 60);
  fraction_digits = std::clamp(fraction_digits, 0, 9);
  if (fraction_digits > 0) {
    text += '.';
    text += fmt::format("{:09}", unix_nano % kSecond).substr(0, static_cast<std::size_t>(fraction_digits));
  }
  text += 'Z';
  return text;
}

std::string RenderTraceText(std::span<const Span> spans) {
  if (spans.empty()) return "no spans\n";
  const TraceBounds bounds = BoundsOf(spans);
  std::string text =
      fmt::format("trace {}  {}  {}  {}, {}\n", ToHex(spans.front().trace_id),
                  FormatUnixNanoIso8601(bounds.start, 9), FormatSpanDuration(bounds.end - bounds.start),
                  Plural(spans.size(), "span"), Plural(bounds.errors, "error"));
  for (const TraceTreeRow& row : OrderTraceTree(spans)) {
    const Span& span = *row.span;
    // A span that ends before it starts (a clock step, or a producer's bug) has no duration to show.
    const std::string duration =
        span.end_time_unix_nano >= span.start_time_unix_nano ? FormatSpanDuration(DurationOf(span)) : "?";
    text += PadLeft("+" + FormatSpanDuration(span.start_time_unix_nano - bounds.start), kOffsetWidth);
    text += "  ";
    text += PadLeft(duration, kDurationWidth);
    text += span.status_code == StatusCode::kError ? "  ! " : "    ";
    text += std::string(2 * static_cast<std::size_t>(row.depth), ' ');
    text += span.name;
    text += SpanDetails(row);
    text += '\n';
  }
  return text;
}

std::string RenderTraceJson(std::span<const Span> spans) {
  const TraceBounds bounds = BoundsOf(spans);
  nlohmann::ordered_json trace = nlohmann::ordered_json::object();
  trace["trace_id"] =
      spans.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(ToHex(spans.front().trace_id));
  AddTime(trace, "start_time", bounds.start);
  AddTime(trace, "end_time", bounds.end);
  trace["duration_ns"] = bounds.end - bounds.start;
  trace["span_count"] = spans.size();
  trace["error_count"] = bounds.errors;
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const TraceTreeRow& row : OrderTraceTree(spans)) {
    const Span& span = *row.span;
    nlohmann::ordered_json item = nlohmann::ordered_json::object();
    item["span_id"] = ToHex(span.span_id);
    item["parent_span_id"] = IsValid(span.parent_span_id) ? nlohmann::ordered_json(ToHex(span.parent_span_id))
                                                          : nlohmann::ordered_json(nullptr);
    item["depth"] = row.depth;
    item["orphan"] = row.orphan;
    item["name"] = span.name;
    item["kind"] = KindName(span.kind);
    AddTime(item, "start_time", span.start_time_unix_nano);
    AddTime(item, "end_time", span.end_time_unix_nano);
    item["offset_ns"] = span.start_time_unix_nano - bounds.start;
    item["duration_ns"] = DurationOf(span);
    item["status"] = {{"code", StatusName(span.status_code)}, {"message", span.status_message}};
    item["trace_state"] = span.trace_state;
    item["attributes"] = AttributesToJson(span.attributes);
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const SpanEvent& event : span.events) {
      nlohmann::ordered_json json_event = nlohmann::ordered_json::object();
      json_event["name"] = event.name;
      AddTime(json_event, "time", event.time_unix_nano);
      json_event["attributes"] = AttributesToJson(event.attributes);
      events.push_back(std::move(json_event));
    }
    item["events"] = std::move(events);
    items.push_back(std::move(item));
  }
  trace["spans"] = std::move(items);
  return DumpJsonPretty(trace);
}

std::string RenderAttemptListText(std::span<const AttemptListing> attempts) {
  if (attempts.empty()) return "no task attempts\n";
  std::vector<std::vector<std::string>> table;
  table.push_back({"START", "DURATION", "STATE", "SPANS", "ERRORS", "TASK", "RUN", "TRY", "TRACES"});
  const auto or_dash = [](const std::string& text) { return text.empty() ? std::string("-") : text; };
  for (const AttemptListing& attempt : attempts) {
    const std::uint64_t duration = attempt.end_time_unix_nano > attempt.start_time_unix_nano
                                       ? attempt.end_time_unix_nano - attempt.start_time_unix_nano
                                       : 0;
    std::string task = or_dash(attempt.name);
    if (attempt.airflow && attempt.map_index >= 0) task += "[" + std::to_string(attempt.map_index) + "]";
    std::string traces;
    for (const std::string& trace_id : attempt.trace_ids) traces += (traces.empty() ? "" : ",") + trace_id;
    table.push_back({FormatUnixNanoIso8601(attempt.start_time_unix_nano, 3), FormatSpanDuration(duration),
                     or_dash(attempt.state), std::to_string(attempt.span_count),
                     std::to_string(attempt.error_count), task,
                     attempt.airflow ? or_dash(attempt.run_id) : "-",
                     attempt.airflow ? std::to_string(attempt.try_number) : "-", or_dash(traces)});
  }
  std::vector<std::size_t> widths(table.front().size(), 0);
  for (const auto& line : table) {
    for (std::size_t column = 0; column < line.size(); ++column) {
      widths[column] = std::max(widths[column], DisplayWidth(line[column]));
    }
  }
  std::string text;
  for (const auto& line : table) {
    for (std::size_t column = 0; column < line.size(); ++column) {
      const bool last = column + 1 == line.size();
      // No trailing spaces: the last column is not padded.
      text += last ? line[column] : PadRight(line[column], widths[column]) + "  ";
    }
    text += '\n';
  }
  return text;
}

std::string RenderAttemptListJson(std::span<const AttemptListing> attempts) {
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const AttemptListing& attempt : attempts) {
    const auto when_airflow = [&attempt](nlohmann::ordered_json value) {
      return attempt.airflow ? std::move(value) : nlohmann::ordered_json(nullptr);
    };
    nlohmann::ordered_json item = nlohmann::ordered_json::object();
    item["name"] = attempt.name;
    item["dag_id"] = when_airflow(attempt.dag_id);
    item["task_id"] = when_airflow(attempt.task_id);
    item["run_id"] = when_airflow(attempt.run_id);
    item["try_number"] = when_airflow(attempt.try_number);
    item["map_index"] = when_airflow(attempt.map_index);
    item["state"] = attempt.state;
    item["trace_ids"] = attempt.trace_ids;
    AddTime(item, "start_time", attempt.start_time_unix_nano);
    AddTime(item, "end_time", attempt.end_time_unix_nano);
    item["duration_ns"] = attempt.end_time_unix_nano > attempt.start_time_unix_nano
                              ? attempt.end_time_unix_nano - attempt.start_time_unix_nano
                              : 0;
    item["span_count"] = attempt.span_count;
    item["error_count"] = attempt.error_count;
    items.push_back(std::move(item));
  }
  nlohmann::ordered_json root = nlohmann::ordered_json::object();
  root["attempts"] = std::move(items);
  return DumpJsonPretty(root);
}

}  // namespace sparktrace::cli
