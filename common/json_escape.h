#pragma once
// JSON string escaping for the text we write by hand (log lines, the trace view's large answers):
// quotes, backslashes and control characters escaped, invalid UTF-8 replaced by U+FFFD so that the
// result is always valid JSON (nlohmann's DumpJson does the same). Pure functions; thread-safe.

#include <string>
#include <string_view>

namespace sparktrace {

// Appends `text` as the inside of a JSON string literal (quotes not included).
void AppendJsonEscaped(std::string& out, std::string_view text);
// Appends `text` as a JSON string literal, quotes included.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace sparktrace
