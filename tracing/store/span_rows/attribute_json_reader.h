#pragma once
// The fast way back from the store's attributes and events columns (tracing/attribute_json.h's form)
// to spans: simdjson instead of a nlohmann tree, because reading a 20,000-span trace for the trace
// view is otherwise dominated by building and dropping JSON trees. Same results as
// AttributesFromJson: strings, int64, doubles, booleans, string lists; null reads as NaN; objects and
// mixed arrays come back as their (minified) JSON text.
//
// Threads: each thread uses its own parser (thread_local); safe to call from any thread.

#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::store {

// False (and `out` untouched) when `text` is not a JSON object.
bool ReadAttributesJson(std::string_view text, std::vector<Attribute>& out);
// False when `text` is not a JSON array of event objects ({name, time_unix_nano, attributes}).
bool ReadEventsJson(std::string_view text, std::vector<SpanEvent>& out);

}  // namespace sparktrace::tracing::store
