#pragma once
// Internal to sparktrace_listener_events (only its .cc files include this; simdjson stays out of
// the public headers): reading the fields of an event-log object with simdjson On Demand.
//
// Every object is walked once, in document order, and each field is dispatched on its key; fields
// nobody asks for are skipped without being decoded. A single pass is both the fastest way through
// On Demand and indifferent to field order and to the keys each Spark version adds or drops.
//
// Errors are simdjson error codes plus the key they happened at (ReadFailure), so the hot path
// never allocates; the message is built only for a line that fails.

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/utf8.h"

namespace sparktrace::listener::events::json {

namespace ondemand = simdjson::ondemand;
using simdjson::error_code;

// Where a line failed. `field` is the innermost key being read (it points into the parser's
// buffers or at a string literal: valid until the next parse on the same parser).
struct ReadFailure {
  std::string_view field;
  error_code code = simdjson::SUCCESS;
};

// A required field was not in the object. NO_SUCH_FIELD is simdjson's own code for that.
inline error_code Missing(ReadFailure& failure, std::string_view field) {
  failure.field = field;
  failure.code = simdjson::NO_SUCH_FIELD;
  return simdjson::NO_SUCH_FIELD;
}

// The fields of an object still to be visited: all of them, or those after "Event".
struct FieldRange {
  ondemand::object_iterator next;
  ondemand::object_iterator end;
};

inline error_code FieldsOf(ondemand::object& object, FieldRange& range) {
  if (error_code error = object.begin().get(range.next)) return error;
  return object.end().get(range.end);
}

// A field's key. Spark writes keys plain, so the key is its raw bytes (in the line, between the
// quotes before the ':' its value follows) unless they hold an escape or the writer put spaces
// around the ':'; only then is it unescaped into simdjson's string buffer (a call per key, some
// eighty per task end, otherwise).
inline error_code FieldKey(ondemand::field& field, std::string_view& key) {
  const char* raw = field.key().raw();
  const char* value_start = field.value().raw_json_token().data();
  if (value_start - raw >= 2 && value_start[-1] == ':' && value_start[-2] == '"') {
    const std::string_view bytes(raw, static_cast<std::size_t>(value_start - 2 - raw));
    if (bytes.find('\\') == std::string_view::npos) {
      key = bytes;
      return simdjson::SUCCESS;
    }
  }
  return field.unescaped_key().get(key);
}

// Calls on_field(key, value) for each field left in `range` until done() says so (checked
// before each field); on_field returns an error_code. Values on_field does not touch are skipped
// by the iterator, and so are the fields after done(), by the parent's iteration. Stops at the
// first error and records the key it happened at, unless a nested visit already recorded a
// deeper one.
template <typename Done, typename OnField>
error_code VisitFieldsUntil(FieldRange range, ReadFailure& failure, Done&& done, OnField&& on_field) {
  while (range.next != range.end && !done()) {
    ondemand::field field;
    if (error_code error = (*range.next).get(field)) return error;
    std::string_view key;
    if (error_code error = FieldKey(field, key)) return error;
    if (error_code error = on_field(key, field.value())) {
      if (failure.field.empty()) failure.field = key;
      return error;
    }
    ++range.next;
  }
  return simdjson::SUCCESS;
}

template <typename OnField>
error_code VisitFields(FieldRange range, ReadFailure& failure, OnField&& on_field) {
  return VisitFieldsUntil(
      range, failure, [] { return false; }, std::forward<OnField>(on_field));
}

template <typename Done, typename OnField>
error_code VisitObjectUntil(ondemand::value& value, ReadFailure& failure, Done&& done, OnField&& on_field) {
  ondemand::object object;
  if (error_code error = value.get_object().get(object)) return error;
  FieldRange range;
  if (error_code error = FieldsOf(object, range)) return error;
  return VisitFieldsUntil(range, failure, std::forward<Done>(done), std::forward<OnField>(on_field));
}

template <typename OnField>
error_code VisitObject(ondemand::value& value, ReadFailure& failure, OnField&& on_field) {
  return VisitObjectUntil(
      value, failure, [] { return false; }, std::forward<OnField>(on_field));
}

// The keys of an object a reader wants, for VisitObjectUntil where Spark writes them before keys
// nobody reads (the executor's 25 memory gauges after "JVMHeapMemory", the push-based shuffle
// figures after "Total Records Read"): the visit ends once each was read, and the rest of the
// object is skipped by simdjson's structural index instead of being walked field by field. A
// log without some wanted key is walked to the end as before.
class WantedKeys {
 public:
  // `count` keys, numbered 0 to count - 1 by the reader.
  explicit WantedKeys(unsigned count) : all_(count >= 32 ? ~0u : (1u << count) - 1) {}
  void Read(unsigned key) { read_ |= 1u << key; }
  bool AllRead() const { return read_ == all_; }

 private:
  std::uint32_t all_;
  std::uint32_t read_ = 0;
};

// Calls on_element(value) for each element of an array value.
template <typename OnElement>
error_code VisitArray(ondemand::value& value, OnElement&& on_element) {
  ondemand::array array;
  if (error_code error = value.get_array().get(array)) return error;
  for (auto element_result : array) {
    ondemand::value element;
    if (error_code error = element_result.get(element)) return error;
    if (error_code error = on_element(element)) return error;
  }
  return simdjson::SUCCESS;
}

// True (and the null consumed) when the value is JSON null: Jackson writes None as null.
error_code ConsumeNull(ondemand::value& value, bool& is_null);

// Inline: a task end reads some forty numbers, and the call around simdjson's own inline
// parsing cost more than the parsing of most of them.
inline error_code ReadInt64(ondemand::value& value, std::int64_t& out) { return value.get_int64().get(out); }
// Spark Int fields; a value outside int32 is NUMBER_OUT_OF_RANGE.
inline error_code ReadInt32(ondemand::value& value, std::int32_t& out) {
  std::int64_t wide = 0;
  if (error_code error = value.get_int64().get(wide)) return error;
  if (wide < std::numeric_limits<std::int32_t>::min() || wide > std::numeric_limits<std::int32_t>::max()) {
    return simdjson::NUMBER_OUT_OF_RANGE;
  }
  out = static_cast<std::int32_t>(wide);
  return simdjson::SUCCESS;
}
inline error_code ReadBool(ondemand::value& value, bool& out) { return value.get_bool().get(out); }
error_code ReadString(ondemand::value& value, std::string& out);
// Free text, cut to kMaxMessageBytes at a UTF-8 character boundary.
error_code ReadMessage(ondemand::value& value, std::string& out);

// null → nullopt.
error_code ReadOptionalInt64(ondemand::value& value, std::optional<std::int64_t>& out);
error_code ReadOptionalString(ondemand::value& value, std::optional<std::string>& out);
error_code ReadOptionalMessage(ondemand::value& value, std::optional<std::string>& out);

}  // namespace sparktrace::listener::events::json
