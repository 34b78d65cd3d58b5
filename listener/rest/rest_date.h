#pragma once
// The date format of Spark's REST API (JacksonMessageWriter: "yyyy-MM-dd'T'HH:mm:ss.SSS'GMT'",
// always UTC), e.g. "2015-02-03T16:42:59.720GMT". Pure function; thread-safe.

#include <optional>
#include <string_view>

#include "listener/events/spark_event.h"

namespace sparktrace::listener::rest {

// Epoch milliseconds, or nullopt for anything not exactly in that format (a trailing "Z" instead
// of "GMT" is accepted too, for proxies that re-serialise). Years 1970..9999.
std::optional<events::EpochMillis> ParseRestDate(std::string_view text);

}  // namespace sparktrace::listener::rest
