#include "tracing/store/span_rows/stored_span.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <system_error>
#include <tuple>

#include "common/hex_digit.h"
#include "common/json_writer.h"
#include "tracing/attribute_json.h"
#include "tracing/span_vocabulary.h"
#include "tracing/store/span_rows/attribute_json_reader.h"
#include "tracing/store/span_rows/compact_attribute_dictionary.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"

namespace sparktrace::tracing::store {
namespace {

// By hand rather than from_chars: every span read decodes three ids (a 20,000-span page, 60,000),
// and a digit at a time through from_chars cost a tenth of the read.
template <std::size_t N>
bool ParseHex(std::string_view hex, std::array<std::uint8_t, N>& out) {
  if (hex.size() != 2 * N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    const int high = HexDigitValue(hex[2 * i]);
    const int low = HexDigitValue(hex[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

// An id stored as its bytes (SQLite since schema version 10).
template <std::size_t N>
bool CopyIdBytes(std::string_view bytes, std::array<std::uint8_t, N>& out) {
  if (bytes.size() != N) return false;
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<std::uint8_t>(bytes[i]);
  return true;
}

template <std::size_t N>
bool ReadId(std::string_view stored, bool binary, std::array<std::uint8_t, N>& out) {
  return binary ? CopyIdBytes(stored, out) : ParseHex(stored, out);
}

}  // namespace

void ExtractStoredColumns(const std::vector<Attribute>& attributes, StoredSpanRow& columns) {
  for (const auto& attribute : attributes) {
    const auto* text = std::get_if<std::string>(&attribute.value);
    if (attribute.key == kAirflowTryNumberKey) {
      if (const auto* number = std::get_if<std::int64_t>(&attribute.value)) {
        columns.try_number = *number;
      } else if (text != nullptr) {
        // Airflow hands identity over as headers, so some producers will forward the text.
        std::int64_t parsed = 0;
        auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), parsed);
        if (ec == std::errc() && end == text->data() + text->size()) columns.try_number = parsed;
      }
      continue;
    }
    if (text == nullptr) continue;
    if (attribute.key == kSparkConnectOperationIdKey) {
      columns.operation_id = text;
    } else if (attribute.key == kSparkConnectSessionIdKey) {
      columns.session_id = text;
    } else if (attribute.key == kAirflowDagIdKey) {
      columns.dag_id = text;
    } else if (attribute.key == kAirflowTaskIdKey) {
      columns.task_id = text;
    } else if (attribute.key == kAirflowRunIdKey) {
      columns.run_id = text;
    }
  }
}

namespace {

// [{"name", "time_unix_nano", "attributes"}, …]
std::string EventsToJson(const std::vector<SpanEvent>& events) {
  if (events.empty()) return "[]";  // most spans: what the writer below gives, without its buffer
  JsonWriter out;
  out.BeginArray();
  for (const auto& event : events) {
    out.BeginObject();
    out.Key("name").String(event.name);
    out.Key("time_unix_nano").Int(ToSql(event.time_unix_nano));
    out.Key("attributes");
    WriteAttributesJson(out, event.attributes);
    out.EndObject();
  }
  out.EndArray();
  return out.Take();
}

template <typename Enum>
Enum EnumFromSql(std::int64_t value, Enum max, Enum fallback) {
  if (value < 0 || value > static_cast<std::int64_t>(max)) return fallback;
  return static_cast<Enum>(value);
}

}  // namespace

bool IsStorable(const Span& span) { return IsValid(span.trace_id) && IsValid(span.span_id); }

StoredSpanRow ToStoredRow(const Span& span, AttributeEncoding encoding) {
  StoredSpanRow row;
  row.trace_id = ToHex(span.trace_id);
  row.span_id = ToHex(span.span_id);
  if (IsValid(span.parent_span_id)) row.parent_span_id = ToHex(span.parent_span_id);
  row.name = span.name;
  row.kind = static_cast<std::int64_t>(span.kind);
  row.start_unix_nano = ToSql(span.start_time_unix_nano);
  row.end_unix_nano = ToSql(span.end_time_unix_nano);
  row.status_code = static_cast<std::int64_t>(span.status_code);
  row.status_message = span.status_message;
  row.trace_state = span.trace_state;
  if (encoding == AttributeEncoding::kCompact) {
    AppendCompactAttributes(row.attributes, span.attributes);
  } else if (encoding == AttributeEncoding::kJson) {
    JsonWriter attributes;
    WriteAttributesJson(attributes, span.attributes);
    row.attributes = attributes.Take();
  }
  row.events_json = EventsToJson(span.events);
  ExtractStoredColumns(span.attributes, row);
  return row;
}

bool ParseTraceHex(std::string_view hex, TraceId& out) { return ParseHex(hex, out); }

StoredBatch ToStoredBatch(std::span<const Span> spans, AttributeEncoding encoding) {
  StoredBatch batch;
  batch.rows.reserve(spans.size());
  batch.sources.reserve(spans.size());
  for (const Span& span : spans) {
    if (!IsStorable(span)) {
      ++batch.rejected;
      continue;
    }
    batch.rows.push_back(ToStoredRow(span, encoding));
    batch.sources.push_back(&span);
  }
  return batch;
}

BatchTraces GroupByTrace(const std::vector<StoredSpanRow>& rows) {
  BatchTraces traces;
  for (std::size_t i = 0; i < rows.size(); ++i) traces[rows[i].trace_id][rows[i].span_id] = i;
  return traces;
}

TraceSummaryRow SummarizeTrace(const std::vector<StoredSpanRow>& rows, const BatchSpans& spans) {
  const auto earlier = [](const StoredSpanRow* a, const StoredSpanRow* b) {
    return std::tie(a->start_unix_nano, a->span_id) < std::tie(b->start_unix_nano, b->span_id);
  };
  const auto keep_max = [](const std::string*& best, const std::string* value) {
    if (value != nullptr && (best == nullptr || *value > *best)) best = value;
  };
  TraceSummaryRow summary;
  summary.start_unix_nano = std::numeric_limits<std::int64_t>::max();
  summary.end_unix_nano = std::numeric_limits<std::int64_t>::min();
  const StoredSpanRow* root = nullptr;
  const StoredSpanRow* earliest = nullptr;
  for (const auto& [span_id, index] : spans) {
    const StoredSpanRow* row = &rows[index];
    if (earliest == nullptr || earlier(row, earliest)) earliest = row;
    if (!row->parent_span_id && (root == nullptr || earlier(row, root))) root = row;
    summary.start_unix_nano = std::min(summary.start_unix_nano, row->start_unix_nano);
    summary.end_unix_nano = std::max(summary.end_unix_nano, row->end_unix_nano);
    ++summary.span_count;
    if (row->status_code == static_cast<std::int64_t>(StatusCode::kError)) ++summary.error_count;
    keep_max(summary.dag_id, row->dag_id);
    keep_max(summary.task_id, row->task_id);
    keep_max(summary.run_id, row->run_id);
    if (row->try_number && (!summary.try_number || *row->try_number > *summary.try_number)) {
      summary.try_number = row->try_number;
    }
  }
  if (earliest != nullptr) summary.root_name = (root != nullptr ? root : earliest)->name;
  return summary;
}

Result<Span> FromStoredColumns(const StoredSpanColumns& columns) {
  Span span;
  const bool binary = columns.ids_binary;
  if (!ReadId(columns.trace_id, binary, span.trace_id) || !ReadId(columns.span_id, binary, span.span_id)) {
    return Error{ErrorCode::kInternal, binary ? fmt::format("malformed ids in stored span ({} and {} bytes)",
                                                            columns.trace_id.size(), columns.span_id.size())
                                              : fmt::format("malformed ids in stored span {}/{}",
                                                            columns.trace_id, columns.span_id)};
  }
  // From here on, errors name the span by its hex id (made only for an error).
  const auto span_hex = [&] { return binary ? ToHex(span.span_id) : std::string(columns.span_id); };
  if (columns.parent_span_id && !ReadId(*columns.parent_span_id, binary, span.parent_span_id)) {
    return Error{ErrorCode::kInternal, fmt::format("malformed parent id in stored span {}", span_hex())};
  }
  span.name = NameOfStored(columns.name);
  span.kind = EnumFromSql(columns.kind, SpanKind::kConsumer, SpanKind::kUnspecified);
  span.start_time_unix_nano = FromSql(columns.start_unix_nano);
  span.end_time_unix_nano = FromSql(columns.end_unix_nano);
  span.status_code = EnumFromSql(columns.status_code, StatusCode::kError, StatusCode::kUnset);
  span.status_message = std::string(columns.status_message);
  span.trace_state = std::string(columns.trace_state);
  if (columns.attributes_compact) {
    auto attributes = ReadCompactOrSharedAttributes(columns.attributes, columns.attribute_sets);
    if (!attributes.ok()) {
      return Error{attributes.error().code,
                   fmt::format("attributes of stored span {}: {}", span_hex(), attributes.error().message)};
    }
    span.attributes = std::move(attributes).value();
  } else if (!ReadAttributesJson(columns.attributes, span.attributes)) {
    // simdjson, not a nlohmann tree: reading a 20,000-span trace for the trace view is otherwise
    // dominated by building and dropping JSON trees (tracing/store/span_rows/attribute_json_reader.h).
    return Error{ErrorCode::kInternal,
                 fmt::format("attributes of stored span {} are not a JSON object", span_hex())};
  }
  // '': no events, as the PostgreSQL store keeps them since its schema version 16 (a row's '[]' before).
  if (!columns.events_json.empty() && !ReadEventsJson(columns.events_json, span.events)) {
    return Error{ErrorCode::kInternal,
                 fmt::format("stored span {}: events column is not a JSON array of objects", span_hex())};
  }
  return span;
}

std::string_view StoredName(std::string_view name, std::string& scratch) {
  // A name coded whole is its code byte, from a table that lives as long as the program: a writer
  // binds it without a copy (most spans' names; a copy SQLite kept was an allocation a span).
  static constexpr auto kCodeBytes = [] {
    std::array<char, 256> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i);
    return bytes;
  }();
  if (const std::optional<char> code = StoredWholeNameCode(name))
    return {&kCodeBytes[static_cast<unsigned char>(*code)], 1};
  const std::string_view prefix = StoredNamePrefix();
  const bool prefixed = name.starts_with(prefix);
  if (!prefixed && (name.empty() || !IsStoredNameCode(name.front()))) return name;
  scratch.assign(1, prefixed ? kStoredNamePrefixCode : kStoredNameEscapeCode);
  scratch.append(prefixed ? name.substr(prefix.size()) : name);
  return scratch;
}

std::string NameOfStored(std::string_view stored) {
  if (stored.empty()) return {};
  const char code = stored.front();
  if (code == kStoredNameEscapeCode) return std::string(stored.substr(1));
  if (code == kStoredNamePrefixCode) {
    const std::string_view prefix = StoredNamePrefix();
    std::string name;
    name.reserve(prefix.size() + stored.size() - 1);
    name.append(prefix).append(stored.substr(1));
    return name;
  }
  if (IsStoredNameCode(code)) {
    if (const std::optional<std::string_view> whole = StoredWholeNameOf(code)) return std::string(*whole);
  }
  return std::string(stored);
}

}  // namespace sparktrace::tracing::store
