#include "tracing/store/postgres/postgres_span_columns.h"

#include <spdlog/fmt/fmt.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <utility>
#include <variant>

#include "tracing/span_vocabulary.h"
#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/span_rows/attribute_json_reader.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

namespace {

// The bigint whose exclusive or flips a span id's top bit (StoredSpanId). A literal: the minimum bigint
// has no spelling as a number that PostgreSQL parses as a bigint.
constexpr std::string_view kSpanIdTopBitSql = "'-9223372036854775808'::bigint";

}  // namespace

std::string TraceHexSql(std::string_view column) { return fmt::format("replace({}::text, '-', '')", column); }

std::string SpanHexSql(std::string_view column) {
  return fmt::format("lpad(to_hex({} # {}), 16, '0')", column, kSpanIdTopBitSql);
}

std::string TraceIdOfHexSql(std::string_view hex) { return fmt::format("({})::uuid", hex); }

std::string SpanIdOfHexSql(std::string_view hex) {
  // A cast to bit(64) pads or cuts other lengths on the right, so those are NULL (no span) here.
  return fmt::format("((CASE WHEN length({0}) = 16 THEN 'x' || {0} END)::bit(64)::bigint # {1})", hex,
                     kSpanIdTopBitSql);
}

std::int64_t StoredSpanId(const SpanId& id) {
  std::uint64_t value = 0;
  for (const std::uint8_t byte : id) value = (value << 8) | byte;
  return std::bit_cast<std::int64_t>(value ^ (std::uint64_t{1} << 63));
}

std::string IdsFromHexSql(std::string_view param) {
  // A subquery, not a cast of the array: the planner cannot see into it, so it does not estimate each
  // of a batch's ~500 ids against the statistics (5 ms of planning a statement, measured).
  return fmt::format("ARRAY(SELECT {} FROM unnest({}::text[]) id)", TraceIdOfHexSql("id"), param);
}

bool IdentityInSet(const StoredSpanRow& row) {
  return row.dag_id != nullptr && !row.attributes.empty() &&
         static_cast<unsigned char>(row.attributes.front()) == kSharedAttributesFormat &&
         row.name != tracing::kAirflowTaskSpanName;
}

std::string SpanIdentitySql(std::string_view spans, std::string_view sets, std::string_view column) {
  if (column == "dag_id") {
    return fmt::format("coalesce(CASE WHEN {0}.dag_id = '{2}' THEN {1}.set_dag_id END, {0}.dag_id)", spans,
                       sets, kIdentityInSetMarker);
  }
  return fmt::format("coalesce({0}.{2}, {1}.set_{2})", spans, sets, column);
}

std::string SpanIdentitySetJoinSql(std::string_view spans, std::string_view sets) {
  return fmt::format("{0}.dag_id = '{2}' AND {1}.set_id = {3}", spans, sets, kIdentityInSetMarker,
                     AttributeSetIdSql(fmt::format("{}.attributes", spans)));
}

std::string_view StoredEvents(const StoredSpanRow& row) {
  return row.events_json == "[]" ? std::string_view() : std::string_view(row.events_json);
}

const std::string kPostgresSpanIdReadColumns =
    fmt::format("{}, {}, {}", TraceHexSql("trace_id"), SpanHexSql("span_id"), SpanHexSql("parent_span_id"));

const std::string kPostgresSpanReadColumns =
    kPostgresSpanIdReadColumns +
    ", name, kind, start_unix_nano, end_unix_nano, status_code, status_message, trace_state, attributes, "
    "events, set_bytes";

std::string AttributeSetIdSql(std::string_view attributes) {
  // The varint as AppendCompactVarint writes it: 7 bits a byte, the lowest first, the last byte under
  // 128; a set id is a positive bigint, at most 9 bytes. CASE tries its branches in order, so no
  // get_byte reads past the row's end: a truncated or overlong varint is NULL (no set), which the C++
  // reading then reports naming the span, as it reports any malformed row.
  std::string sql =
      fmt::format("CASE WHEN octet_length({0}) > 1 THEN CASE WHEN get_byte({0}, 0) = {1} THEN CASE",
                  attributes, static_cast<int>(kSharedAttributesFormat));
  for (int length = 1; length <= 9; ++length) {
    std::string value;
    for (int at = 1; at <= length; ++at) {
      if (!value.empty()) value += " | ";
      const std::string byte = fmt::format("get_byte({}, {})", attributes, at);
      value += fmt::format("({}{}::bigint << {})", at < length ? "(" : "",
                           at < length ? byte + " & 127)" : byte, 7 * (at - 1));
    }
    sql += fmt::format(" WHEN octet_length({0}) <= {1} THEN NULL WHEN get_byte({0}, {1}) < 128 THEN {2}",
                       attributes, length, value);
  }
  return sql + " END END END";
}

const std::string kPostgresSpansWithSets =
    fmt::format("spans LEFT JOIN attribute_sets ON set_id = {}", AttributeSetIdSql("spans.attributes"));

namespace {

// The sets the rows of one result name, from the set_bytes each row joined: decoded once per id.
class JoinedSets final : public AttributeSetSource {
 public:
  // The set_bytes text of the row being read (nullopt: NULL).
  void ReadingRow(std::optional<std::string_view> set_text) { row_set_ = set_text; }

  Result<std::string> AttributeSetBytes(std::uint64_t set_id) override {
    if (const auto found = decoded_.find(set_id); found != decoded_.end()) return found->second;
    if (!row_set_) return AttributeSetMissing(set_id);
    auto bytes = ByteaFromText(*row_set_);
    if (!bytes) return Error{ErrorCode::kInternal, fmt::format("attribute set {} is not bytea", set_id)};
    return decoded_.emplace(set_id, std::move(*bytes)).first->second;
  }

 private:
  std::optional<std::string_view> row_set_;
  std::unordered_map<std::uint64_t, std::string> decoded_;
};

}  // namespace

bool AreCompactAttributes(std::string_view bytes) {
  if (bytes.empty()) return false;
  const auto format = static_cast<unsigned char>(bytes.front());
  return format == kCompactAttributesFormat || format == kSharedAttributesFormat;
}

Result<std::vector<Attribute>> StoredAttributes(std::string_view bytea_text,
                                                std::optional<std::string_view> set_text,
                                                std::string_view span_hex) {
  const auto malformed = [span_hex] {
    return Error{ErrorCode::kInternal, fmt::format("malformed attributes of stored span {}", span_hex)};
  };
  const auto bytes = ByteaFromText(bytea_text);
  if (!bytes) return malformed();
  if (!AreCompactAttributes(*bytes)) {
    std::vector<Attribute> attributes;
    if (!ReadAttributesJson(*bytes, attributes)) return malformed();
    return attributes;
  }
  JoinedSets sets;
  sets.ReadingRow(set_text);
  auto attributes = ReadCompactOrSharedAttributes(*bytes, &sets);
  if (!attributes.ok()) {
    return Error{attributes.error().code,
                 fmt::format("attributes of stored span {}: {}", span_hex, attributes.error().message)};
  }
  return attributes;
}

Result<std::vector<Span>> SpansOfResult(const PgResult& result, int first) {
  std::vector<Span> spans;
  spans.reserve(static_cast<std::size_t>(result.rows()));
  JoinedSets sets;
  const auto at = [first](int column) { return first + column; };
  for (int row = 0; row < result.rows(); ++row) {
    StoredSpanColumns columns;
    columns.trace_id = result.Text(row, at(0));
    columns.span_id = result.Text(row, at(1));
    if (!result.IsNull(row, at(2))) columns.parent_span_id = result.Text(row, at(2));
    columns.name = result.Text(row, at(3));
    columns.kind = result.Int64(row, at(4));
    columns.start_unix_nano = result.Int64(row, at(5));
    columns.end_unix_nano = result.Int64(row, at(6));
    columns.status_code = result.Int64(row, at(7));
    columns.status_message = result.Text(row, at(8));
    columns.trace_state = result.Text(row, at(9));
    auto attributes = ByteaFromText(result.Text(row, at(10)));
    if (!attributes) {
      return Error{ErrorCode::kInternal,
                   fmt::format("attributes of stored span {} are not bytea", columns.span_id)};
    }
    columns.attributes = *attributes;
    columns.attributes_compact = AreCompactAttributes(*attributes);
    columns.events_json = result.Text(row, at(11));
    sets.ReadingRow(result.IsNull(row, at(12)) ? std::nullopt
                                               : std::optional<std::string_view>(result.Text(row, at(12))));
    columns.attribute_sets = &sets;
    auto span = FromStoredColumns(columns);
    if (!span.ok()) return span.error();
    spans.push_back(std::move(span).value());
  }
  return spans;
}

std::optional<std::int64_t> TaskMapIndexOf(const Span& span) {
  if (span.name != tracing::kAirflowTaskSpanName) return std::nullopt;
  const Attribute* found = nullptr;  // a repeated key's last value, as the stored forms keep it
  for (const Attribute& attribute : span.attributes) {
    if (attribute.key == tracing::kAirflowMapIndexKey) found = &attribute;
  }
  if (found == nullptr) return std::nullopt;
  if (const auto* number = std::get_if<std::int64_t>(&found->value)) return *number;
  if (const auto* real = std::get_if<double>(&found->value)) {
    if (std::isfinite(*real) && std::abs(*real) < 9.2e18) return static_cast<std::int64_t>(*real);
    return std::nullopt;
  }
  if (const auto* text = std::get_if<std::string>(&found->value)) {
    std::int64_t parsed = 0;
    auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), parsed);
    if (ec == std::errc() && end == text->data() + text->size()) return parsed;
  }
  return std::nullopt;
}

}  // namespace sparktrace::tracing::store
