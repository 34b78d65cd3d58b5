#include "listener/events/json_field_reader.h"

#include "listener/events/spark_event.h"

namespace sparktrace::listener::events::json {

error_code ConsumeNull(ondemand::value& value, bool& is_null) {
  ondemand::json_type type;
  if (error_code error = value.type().get(type)) return error;
  is_null = false;
  if (type != ondemand::json_type::null) return simdjson::SUCCESS;
  // type() only peeks; is_null() validates the literal and consumes it.
  if (error_code error = value.is_null().get(is_null)) return error;
  return is_null ? simdjson::SUCCESS : simdjson::INCORRECT_TYPE;
}

error_code ReadString(ondemand::value& value, std::string& out) {
  std::string_view text;
  if (error_code error = value.get_string().get(text)) return error;
  out.assign(text);
  return simdjson::SUCCESS;
}

error_code ReadMessage(ondemand::value& value, std::string& out) {
  std::string_view text;
  if (error_code error = value.get_string().get(text)) return error;
  out.assign(Utf8Prefix(text, kMaxMessageBytes));
  return simdjson::SUCCESS;
}

error_code ReadOptionalInt64(ondemand::value& value, std::optional<std::int64_t>& out) {
  bool is_null = false;
  if (error_code error = ConsumeNull(value, is_null)) return error;
  if (is_null) {
    out.reset();
    return simdjson::SUCCESS;
  }
  std::int64_t number = 0;
  if (error_code error = value.get_int64().get(number)) return error;
  out = number;
  return simdjson::SUCCESS;
}

error_code ReadOptionalString(ondemand::value& value, std::optional<std::string>& out) {
  bool is_null = false;
  if (error_code error = ConsumeNull(value, is_null)) return error;
  if (is_null) {
    out.reset();
    return simdjson::SUCCESS;
  }
  return ReadString(value, out.emplace());
}

error_code ReadOptionalMessage(ondemand::value& value, std::optional<std::string>& out) {
  bool is_null = false;
  if (error_code error = ConsumeNull(value, is_null)) return error;
  if (is_null) {
    out.reset();
    return simdjson::SUCCESS;
  }
  return ReadMessage(value, out.emplace());
}

}  // namespace sparktrace::listener::events::json
