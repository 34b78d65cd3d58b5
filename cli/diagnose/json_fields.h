#pragma once
// The JSON values `sparktrace diagnose --json` writes for figures a log may not hold: null when
// absent (or empty), shared by json_report.cc and sql_report.cc. Each writes the value of the key
// just written and returns the writer.
//
// Pure functions.

#include <cstdint>
#include <optional>
#include <string>

#include "common/json_writer.h"

namespace sparktrace::cli::diagnose {

inline JsonWriter& OptionalInt(JsonWriter& json, std::optional<std::int64_t> value) {
  return value ? json.Int(*value) : json.Null();
}

inline JsonWriter& OptionalString(JsonWriter& json, const std::optional<std::string>& value) {
  return value ? json.String(*value) : json.Null();
}

inline JsonWriter& NonEmptyOrNull(JsonWriter& json, const std::string& value) {
  return value.empty() ? json.Null() : json.String(value);
}

}  // namespace sparktrace::cli::diagnose
