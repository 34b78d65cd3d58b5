#pragma once
// UTF-8 as RFC 3629 defines it: no overlong forms, no UTF-16 surrogates, nothing past U+10FFFF. One
// reading of it for everyone who checks or cleans text: JSON escaping (json_escape.h), PostgreSQL's
// text values (tracing/store/postgres/client/pg_text.h), the trace view's query values
// (traceview/query_values.h), and every bound on free text (event-log messages, RPC errors, SQL
// descriptions).
//
// Pure functions; thread-safe.

#include <cstddef>
#include <string_view>

namespace sparktrace {

// The length (1 to 4) of the valid UTF-8 sequence `text` starts with, or 0 when it does not start
// with one (or is empty). An ASCII byte, NUL included, is a sequence of 1: whoever refuses NUL says so.
std::size_t Utf8SequenceLength(std::string_view text);

// `text` cut to at most `max_bytes`, never inside a character: a cut that would fall on a
// continuation byte (10xxxxxx) backs up to the lead byte before it. Text shorter than the bound is
// returned whole; bytes that are not UTF-8 are left as they are.
std::string_view Utf8Prefix(std::string_view text, std::size_t max_bytes);

}  // namespace sparktrace
