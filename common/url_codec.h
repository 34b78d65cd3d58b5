#pragma once
// Percent-encoding of URL paths and queries (RFC 3986), as the trace view's links and the admin
// server's query strings use it. Pure functions; thread-safe.

#include <map>
#include <string>
#include <string_view>

namespace sparktrace {

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in query strings); a malformed
// escape is kept as it is.
std::string PercentDecode(std::string_view text, bool plus_is_space = false);

// Encodes everything but the unreserved characters A-Z a-z 0-9 - _ . ~ (so '/', '+', ':' and '%' in a
// run id survive as one path segment).
std::string EncodePathSegment(std::string_view text);

// "a=1&b=x%20y" → {a: "1", b: "x y"}; a repeated name keeps its last value.
std::map<std::string, std::string, std::less<>> ParseQuery(std::string_view query);

}  // namespace sparktrace
