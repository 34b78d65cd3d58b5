#include "tracing/otlp/encoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tracing/span_vocabulary.h"

namespace sparktrace::tracing::otlp {
namespace {

// A wire decoder of the test's own (not tracing/otlp/proto_reader), so a bug shared by the
// encoder and our reader cannot hide. Field numbers below are written as literals from the
// OTLP .proto files on purpose: they must not come from the code under test.
struct WireField {
  std::uint32_t number = 0;
  int wire_type = -1;
  std::uint64_t number_value = 0;
  std::string bytes;
};

std::vector<WireField> Decode(const std::string& data) {
  std::vector<WireField> fields;
  std::size_t at = 0;
  auto varint = [&]() {
    std::uint64_t value = 0;
    for (int shift = 0; at < data.size(); shift += 7) {
      const auto byte = static_cast<std::uint8_t>(data[at++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    ADD_FAILURE() << "truncated varint";
    return value;
  };
  while (at < data.size()) {
    const std::uint64_t tag = varint();
    WireField field;
    field.number = static_cast<std::uint32_t>(tag >> 3);
    field.wire_type = static_cast<int>(tag & 7);
    if (field.wire_type == 0) {
      field.number_value = varint();
    } else if (field.wire_type == 1) {
      if (at + 8 > data.size()) {
        ADD_FAILURE() << "truncated fixed64";
        return fields;
      }
      for (int i = 0; i < 8; ++i)
        field.number_value |= std::uint64_t{static_cast<std::uint8_t>(data[at + i])} << (8 * i);
      at += 8;
    } else if (field.wire_type == 2) {
      const std::uint64_t length = varint();
      if (at + length > data.size()) {
        ADD_FAILURE() << "truncated length-delimited field " << field.number;
        return fields;
      }
      field.bytes = data.substr(at, length);
      at += length;
    } else {
      ADD_FAILURE() << "unexpected wire type " << field.wire_type;
      return fields;
    }
    fields.push_back(std::move(field));
  }
  return fields;
}

std::vector<WireField> All(const std::vector<WireField>& fields, std::uint32_t number) {
  std::vector<WireField> out;
  for (const auto& field : fields) {
    if (field.number == number) out.push_back(field);
  }
  return out;
}

bool Has(const std::vector<WireField>& fields, std::uint32_t number) { return !All(fields, number).empty(); }

WireField One(const std::vector<WireField>& fields, std::uint32_t number, int wire_type) {
  auto matches = All(fields, number);
  EXPECT_EQ(matches.size(), 1u) << "field " << number;
  if (matches.empty()) return {};
  EXPECT_EQ(matches[0].wire_type, wire_type) << "field " << number;
  return matches[0];
}

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int value : values) out.push_back(static_cast<char>(value));
  return out;
}

double AsDouble(std::uint64_t bits) {
  double value = 0;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

// KeyValue list -> (key, AnyValue fields).
std::vector<std::pair<std::string, std::vector<WireField>>> KeyValues(const std::vector<WireField>& list) {
  std::vector<std::pair<std::string, std::vector<WireField>>> out;
  for (const auto& entry : list) {
    auto key_value = Decode(entry.bytes);
    std::string key = Has(key_value, 1) ? One(key_value, 1, 2).bytes : "";  // KeyValue.key
    out.emplace_back(std::move(key), Decode(One(key_value, 2, 2).bytes));   // KeyValue.value
  }
  return out;
}

Span FullSpan() {
  Span span;
  for (std::uint8_t i = 0; i < 16; ++i) span.trace_id[i] = static_cast<std::uint8_t>(0xa0 + i);
  for (std::uint8_t i = 0; i < 8; ++i) span.span_id[i] = static_cast<std::uint8_t>(0xb0 + i);
  for (std::uint8_t i = 0; i < 8; ++i) span.parent_span_id[i] = static_cast<std::uint8_t>(0xc0 + i);
  span.trace_state = "vendor=abc";
  span.name = "spark.execute_plan";
  span.kind = SpanKind::kServer;
  span.start_time_unix_nano = 1'700'000'000'123'456'789ULL;
  span.end_time_unix_nano = 1'700'000'001'000'000'000ULL;
  span.attributes = {
      {"airflow.dag_id", std::string("daily_etl")},
      {"rows", std::int64_t{-42}},
      {"ratio", 0.25},
      {"cached", true},
      {"tables", std::vector<std::string>{"a", "", "c"}},
      {"empty", std::string()},
      {"zero", std::int64_t{0}},
      {"no_tables", std::vector<std::string>{}},
  };
  span.events = {
      SpanEvent{"exception", 1'700'000'000'500'000'000ULL, {{"exception.type", std::string("Boom")}}},
      SpanEvent{"bare", 0, {}}};
  span.status_code = StatusCode::kError;
  span.status_message = "task failed";
  return span;
}

// Request -> the single ResourceSpans -> the single ScopeSpans.
std::vector<WireField> ScopeSpansOf(const std::string& request,
                                    std::vector<WireField>* resource_spans_out = nullptr) {
  auto request_fields = Decode(request);
  auto resource_spans = Decode(One(request_fields, 1, 2).bytes);  // ExportTraceServiceRequest.resource_spans
  if (resource_spans_out != nullptr) *resource_spans_out = resource_spans;
  return Decode(One(resource_spans, 2, 2).bytes);  // ResourceSpans.scope_spans
}

TEST(OtlpEncoder, EncodesEverySpanFieldWithTheOtlpFieldNumbers) {
  const Span span = FullSpan();
  const OtlpEncoder encoder({}, "0.1.0");
  const auto scope_spans = ScopeSpansOf(encoder.Encode(std::span<const Span>(&span, 1)));
  const auto spans = All(scope_spans, 2);  // ScopeSpans.spans
  ASSERT_EQ(spans.size(), 1u);
  const auto fields = Decode(spans[0].bytes);

  EXPECT_EQ(One(fields, 1, 2).bytes, std::string(span.trace_id.begin(), span.trace_id.end()));  // trace_id
  EXPECT_EQ(One(fields, 2, 2).bytes, std::string(span.span_id.begin(), span.span_id.end()));    // span_id
  EXPECT_EQ(One(fields, 3, 2).bytes, "vendor=abc");                                             // trace_state
  EXPECT_EQ(One(fields, 4, 2).bytes, std::string(span.parent_span_id.begin(), span.parent_span_id.end()));
  EXPECT_EQ(One(fields, 5, 2).bytes, "spark.execute_plan");              // name
  EXPECT_EQ(One(fields, 6, 0).number_value, 2u);                         // kind = SPAN_KIND_SERVER
  EXPECT_EQ(One(fields, 7, 1).number_value, span.start_time_unix_nano);  // fixed64
  EXPECT_EQ(One(fields, 8, 1).number_value, span.end_time_unix_nano);

  const auto attributes = KeyValues(All(fields, 9));
  ASSERT_EQ(attributes.size(), 8u);
  EXPECT_EQ(attributes[0].first, "airflow.dag_id");
  EXPECT_EQ(One(attributes[0].second, 1, 2).bytes, "daily_etl");  // AnyValue.string_value
  EXPECT_EQ(attributes[1].first, "rows");
  EXPECT_EQ(static_cast<std::int64_t>(One(attributes[1].second, 3, 0).number_value), -42);  // int_value
  EXPECT_EQ(attributes[2].first, "ratio");
  EXPECT_EQ(AsDouble(One(attributes[2].second, 4, 1).number_value), 0.25);  // double_value
  EXPECT_EQ(attributes[3].first, "cached");
  EXPECT_EQ(One(attributes[3].second, 2, 0).number_value, 1u);  // bool_value
  EXPECT_EQ(attributes[4].first, "tables");
  const auto array = Decode(One(attributes[4].second, 5, 2).bytes);  // array_value
  const auto elements = All(array, 1);                               // ArrayValue.values
  ASSERT_EQ(elements.size(), 3u);
  EXPECT_EQ(One(Decode(elements[0].bytes), 1, 2).bytes, "a");
  EXPECT_EQ(One(Decode(elements[1].bytes), 1, 2).bytes, "");  // present though empty
  EXPECT_EQ(One(Decode(elements[2].bytes), 1, 2).bytes, "c");
  // Oneof members are present at their default values; leaving them out would lose the value.
  EXPECT_EQ(attributes[5].first, "empty");
  EXPECT_EQ(One(attributes[5].second, 1, 2).bytes, "");
  EXPECT_EQ(attributes[6].first, "zero");
  EXPECT_EQ(One(attributes[6].second, 3, 0).number_value, 0u);
  EXPECT_EQ(attributes[7].first, "no_tables");
  EXPECT_TRUE(One(attributes[7].second, 5, 2).bytes.empty());

  const auto events = All(fields, 11);  // Span.events
  ASSERT_EQ(events.size(), 2u);
  const auto exception = Decode(events[0].bytes);
  EXPECT_EQ(One(exception, 1, 1).number_value, 1'700'000'000'500'000'000ULL);  // Event.time_unix_nano
  EXPECT_EQ(One(exception, 2, 2).bytes, "exception");                          // Event.name
  const auto event_attributes = KeyValues(All(exception, 3));                  // Event.attributes
  ASSERT_EQ(event_attributes.size(), 1u);
  EXPECT_EQ(event_attributes[0].first, "exception.type");
  EXPECT_EQ(One(event_attributes[0].second, 1, 2).bytes, "Boom");
  const auto bare = Decode(events[1].bytes);
  EXPECT_FALSE(Has(bare, 1));
  EXPECT_EQ(One(bare, 2, 2).bytes, "bare");

  const auto status = Decode(One(fields, 15, 2).bytes);  // Span.status
  EXPECT_FALSE(Has(status, 1));                          // reserved
  EXPECT_EQ(One(status, 2, 2).bytes, "task failed");     // Status.message
  EXPECT_EQ(One(status, 3, 0).number_value, 2u);         // Status.code = STATUS_CODE_ERROR

  for (const auto& field : fields) {
    EXPECT_TRUE(field.number <= 9 || field.number == 11 || field.number == 15)
        << "unexpected field " << field.number;
  }
}

TEST(OtlpEncoder, RootSpanHasNoParentAndDefaultsAreLeftOut) {
  Span span;
  span.trace_id[15] = 1;
  span.span_id[7] = 2;
  span.kind = SpanKind::kUnspecified;
  const OtlpEncoder encoder({}, "");
  const auto scope_spans = ScopeSpansOf(encoder.Encode(std::span<const Span>(&span, 1)));
  const auto fields = Decode(One(scope_spans, 2, 2).bytes);
  EXPECT_FALSE(Has(fields, 4)) << "parent_span_id must be absent for a root span";
  for (std::uint32_t absent : {3u, 5u, 6u, 7u, 8u, 9u, 11u, 15u}) EXPECT_FALSE(Has(fields, absent)) << absent;
  EXPECT_EQ(One(fields, 1, 2).bytes.size(), 16u);
  EXPECT_EQ(One(fields, 2, 2).bytes.size(), 8u);
}

TEST(OtlpEncoder, StatusWithOnlyAMessageOrOnlyOk) {
  Span ok_span;
  ok_span.status_code = StatusCode::kOk;
  Span message_only;
  message_only.status_message = "note";
  const std::vector<Span> spans = {ok_span, message_only};
  const auto scope_spans = ScopeSpansOf(OtlpEncoder({}, "").Encode(spans));
  const auto encoded = All(scope_spans, 2);
  ASSERT_EQ(encoded.size(), 2u);
  const auto ok_status = Decode(One(Decode(encoded[0].bytes), 15, 2).bytes);
  EXPECT_EQ(One(ok_status, 3, 0).number_value, 1u);
  EXPECT_FALSE(Has(ok_status, 2));
  const auto message_status = Decode(One(Decode(encoded[1].bytes), 15, 2).bytes);
  EXPECT_EQ(One(message_status, 2, 2).bytes, "note");
  EXPECT_FALSE(Has(message_status, 3));
}

TEST(OtlpEncoder, ResourceAndScopeAndSpanOrder) {
  std::vector<Span> spans(3);
  spans[0].name = "first";
  spans[1].name = "second";
  spans[2].name = "third";
  const OtlpEncoder encoder(
      {{"service.name", std::string("sparktrace")}, {"process.pid", std::int64_t{1234}}}, "1.2.3");
  std::vector<WireField> resource_spans;
  const auto scope_spans = ScopeSpansOf(encoder.Encode(spans), &resource_spans);

  const auto resource = Decode(One(resource_spans, 1, 2).bytes);  // ResourceSpans.resource
  const auto attributes = KeyValues(All(resource, 1));            // Resource.attributes
  ASSERT_EQ(attributes.size(), 2u);
  EXPECT_EQ(attributes[0].first, "service.name");
  EXPECT_EQ(One(attributes[0].second, 1, 2).bytes, "sparktrace");
  EXPECT_EQ(attributes[1].first, "process.pid");
  EXPECT_EQ(One(attributes[1].second, 3, 0).number_value, 1234u);

  const auto scope = Decode(One(scope_spans, 1, 2).bytes);  // ScopeSpans.scope
  EXPECT_EQ(One(scope, 1, 2).bytes, "sparktrace");          // InstrumentationScope.name
  EXPECT_EQ(One(scope, 2, 2).bytes, "1.2.3");               // InstrumentationScope.version

  const auto encoded = All(scope_spans, 2);
  ASSERT_EQ(encoded.size(), 3u);
  EXPECT_EQ(One(Decode(encoded[0].bytes), 5, 2).bytes, "first");
  EXPECT_EQ(One(Decode(encoded[1].bytes), 5, 2).bytes, "second");
  EXPECT_EQ(One(Decode(encoded[2].bytes), 5, 2).bytes, "third");
}

TEST(OtlpEncoder, MatchesHandComputedBytes) {
  Span span;
  for (int i = 0; i < 16; ++i) span.trace_id[i] = static_cast<std::uint8_t>(i + 1);
  for (int i = 0; i < 8; ++i) span.span_id[i] = static_cast<std::uint8_t>(0x11 + i);
  span.name = "s";
  span.kind = SpanKind::kInternal;
  span.start_time_unix_nano = 1;
  span.end_time_unix_nano = 2;

  const std::string span_body =
      Bytes({0x0a, 0x10, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}) +  // 1: trace_id
      Bytes({0x12, 0x08, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18}) +         // 2: span_id
      Bytes({0x2a, 0x01, 's'}) +                                                    // 5: name
      Bytes({0x30, 0x01}) +                                                         // 6: kind varint
      Bytes({0x39, 1, 0, 0, 0, 0, 0, 0, 0}) +                                       // 7: fixed64 start
      Bytes({0x41, 2, 0, 0, 0, 0, 0, 0, 0});                                        // 8: fixed64 end
  ASSERT_EQ(span_body.size(), 51u);
  const std::string scope = Bytes({0x0a, 0x0a}) + "sparktrace";  // name
  const std::string scope_spans = Bytes({0x0a, 0x0c}) + scope + Bytes({0x12, 0x33}) + span_body;
  ASSERT_EQ(scope_spans.size(), 67u);
  const std::string resource_spans = Bytes({0x0a, 0x00}) + Bytes({0x12, 0x43}) + scope_spans;
  const std::string request = Bytes({0x0a, 0x47}) + resource_spans;

  EXPECT_EQ(OtlpEncoder({}, "").Encode(std::span<const Span>(&span, 1)), request);
}

TEST(OtlpEncoder, LongValuesGetMultiByteLengths) {
  Span span;
  span.name = std::string(300, 'x');  // length 300 = varint ac 02
  const auto scope_spans = ScopeSpansOf(OtlpEncoder({}, "").Encode(std::span<const Span>(&span, 1)));
  EXPECT_EQ(One(Decode(One(scope_spans, 2, 2).bytes), 5, 2).bytes, span.name);
}

TEST(OtlpEncoder, LeavesTheWholeSqlPlanOutButKeepsTheRestOfTheSpan) {
  Span span;
  span.trace_id[15] = 1;
  span.span_id[7] = 3;
  span.name = std::string(kSparkSqlExecutionSpanName);
  span.attributes.push_back({std::string(kSparkSqlPlanKey), std::string(R"({"root":"plan-sentinel"})")});
  span.attributes.push_back({std::string(kSparkSqlDescriptionKey), std::string("description-sentinel")});
  span.events.push_back({std::string(kSparkSqlOperatorEvent), 5, {{std::string(kSparkSqlOperatorNameKey),
                                                                   std::string("operator-sentinel")}}});
  const auto scope_spans = ScopeSpansOf(OtlpEncoder({}, "").Encode(std::span<const Span>(&span, 1)));
  const auto fields = Decode(One(scope_spans, 2, 2).bytes);
  const auto attributes = All(fields, 9);  // Span.attributes
  ASSERT_EQ(attributes.size(), 1u);
  EXPECT_NE(attributes[0].bytes.find("description-sentinel"), std::string::npos);
  EXPECT_NE(One(fields, 11, 2).bytes.find("operator-sentinel"), std::string::npos);  // Span.events
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
