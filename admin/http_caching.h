#pragma once
// Conditional requests and compression for the admin server's GET answers (the trace view's pages,
// assets and JSON): a strong ETag from the body, 304 for a matching If-None-Match, and gzip when the
// client accepts it. Pure functions; thread-safe.

#include <optional>
#include <string>
#include <string_view>

namespace sparktrace::admin {

// A strong entity tag of the body's bytes, quoted: "\"9f86d081884c7d65\"".
std::string EntityTag(std::string_view body);

// True when an If-None-Match header value (a list of tags, or "*") names `etag`.
bool MatchesIfNoneMatch(std::string_view if_none_match, std::string_view etag);

// True when an Accept-Encoding header value accepts gzip (and does not give it q=0).
bool AcceptsGzip(std::string_view accept_encoding);

// Whether a body of this type and size is worth compressing (text-like, at least 1 KiB).
bool WorthCompressing(std::string_view content_type, std::size_t size);

// The gzip member (RFC 1952) of `body`; nullopt if zlib fails. Large bodies use a faster level: the
// API answers a 20,000-span trace within its latency budget.
std::optional<std::string> Gzip(std::string_view body);

}  // namespace sparktrace::admin
