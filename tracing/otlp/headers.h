#pragma once
// Headers the OTLP exporters add to every export (API keys, tenant ids): from `--otlp-header
// k=v` flags, and the OpenTelemetry `k=v,k=v` list format shared by OTEL_EXPORTER_OTLP_HEADERS
// and OTEL_RESOURCE_ATTRIBUTES. Values may be secrets: nothing here logs them, and errors name
// the key only. Pure functions; any thread.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace sparktrace::tracing::otlp {

using OtlpHeaders = std::vector<std::pair<std::string, std::string>>;

// "k=v" from one --otlp-header flag: the key is trimmed and lower-cased (HTTP/2 and gRPC
// metadata keys are lower case), the value is taken as given after the first '='.
Result<std::pair<std::string, std::string>> ParseOtlpHeader(std::string_view flag_value);

// "k1=v1,k2=v2" as the OpenTelemetry SDK environment spec defines it: entries split on ',',
// key and value split on the first '=', surrounding spaces trimmed, then percent-decoded.
// Any malformed entry (no '=', empty key, bad %-escape) fails the whole list, as the spec says.
// Empty input is an empty list.
Result<std::vector<std::pair<std::string, std::string>>> ParseOtelKeyValueList(std::string_view text);

// Checks that every header can be sent: keys of [a-z0-9-_.] and not reserved by HTTP/2 or gRPC
// (":…", "grpc-…", "content-type", "te", "host", "connection", "user-agent", "content-length"),
// values of printable ASCII. Keys ending in "-bin" may hold any bytes (gRPC encodes them).
Result<void> ValidateOtlpHeaders(const OtlpHeaders& headers);

}  // namespace sparktrace::tracing::otlp
