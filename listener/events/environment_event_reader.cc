// Reader of SparkListenerEnvironmentUpdate: the kept configuration properties only. Every other
// value (JVM information, system properties, classpath, metrics properties) is skipped undecoded,
// and a property not on the allow-list is never copied (kept_properties.h).
#include <string_view>

#include "listener/events/event_readers.h"
#include "listener/events/kept_properties.h"

namespace sparktrace::listener::events::json {
namespace {

// "Spark Properties" / "Hadoop Properties": an object of strings (every Spark version writes
// them with mapToJson). A non-string value of a kept key is a field error, like any other.
error_code ReadProperties(ondemand::value& value, ReadFailure& failure, EnvironmentUpdate& out) {
  return VisitObject(value, failure, [&](std::string_view key, ondemand::value& property) -> error_code {
    if (!IsKeptProperty(key)) return simdjson::SUCCESS;
    std::string_view text;
    if (error_code error = property.get_string().get(text)) return error;
    out.properties.push_back(
        ConfigProperty{std::string(key), std::string(Utf8Prefix(text, kMaxPropertyValueBytes))});
    return simdjson::SUCCESS;
  });
}

}  // namespace

error_code ReadEnvironmentUpdate(FieldRange fields, ReadFailure& failure, EnvironmentUpdate& out) {
  return VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
    if (key == "Spark Properties" || key == "Hadoop Properties") return ReadProperties(value, failure, out);
    return simdjson::SUCCESS;  // "JVM Information", "System Properties", "Classpath Entries", ...
  });
}

}  // namespace sparktrace::listener::events::json
