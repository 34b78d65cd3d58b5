#pragma once
// UTF-8 as RFC 3629 defines it: no overlong forms, no UTF-16 surrogates, nothing past U+10FFFF. One
// reading of it for everyone who checks or cleans text: JSON escaping (json_escape.h), PostgreSQL's
// text values (tracing/store/pg_text.h), the trace view's query values (traceview/query_values.h).
//
// Pure functions; thread-safe.

#include <cstddef>
#include <string_view>

namespace sparktrace {

// The length (1 to 4) of the valid UTF-8 sequence `text` starts with, or 0 when it does not start
// with one (or is empty). An ASCII byte, NUL included, is a sequence of 1: whoever refuses NUL says so.
std::size_t Utf8SequenceLength(std::string_view text);

}  // namespace sparktrace
