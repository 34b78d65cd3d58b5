#pragma once
// Blanks (spaces and horizontal tabs) around a value: HTTP's optional whitespace around a header
// value or a list item (RFC 9110, 5.6.3), which W3C trace context, Airflow's carrier and the OTLP
// header flag also allow. Not other whitespace: a CR or LF there is malformed input, not padding.

#include <string_view>

namespace sparktrace {

constexpr bool IsBlank(char c) { return c == ' ' || c == '\t'; }

constexpr std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace sparktrace
