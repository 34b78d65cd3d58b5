#include "admin/http_caching.h"

#include <zlib.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>

#include "common/text_trim.h"

namespace sparktrace::admin {
namespace {

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

template <typename Visit>
void ForEachListItem(std::string_view list, Visit visit) {
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    visit(TrimBlanks(list.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string EntityTag(std::string_view body) {
  // FNV-1a over the bytes, twice with different offsets: 128 bits, so that two different answers
  // sharing a tag is not a practical concern; the tag is not a security boundary.
  std::uint64_t first = 14695981039346656037ULL;
  std::uint64_t second = 0x6c62272e07bb0142ULL;
  for (const char c : body) {
    first = (first ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    second = (second ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL + 0x9e3779b97f4a7c15ULL;
  }
  std::array<char, 40> text{};
  std::snprintf(text.data(), text.size(), "\"%016llx%016llx\"", static_cast<unsigned long long>(first),
                static_cast<unsigned long long>(second));
  return text.data();
}

bool MatchesIfNoneMatch(std::string_view if_none_match, std::string_view etag) {
  bool matched = false;
  ForEachListItem(if_none_match, [&](std::string_view item) {
    if (item.starts_with("W/")) item.remove_prefix(2);  // weak comparison, as RFC 9110 asks for If-None-Match
    if (item == "*" || item == etag) matched = true;
  });
  return matched;
}

bool AcceptsGzip(std::string_view accept_encoding) {
  bool accepted = false;
  ForEachListItem(accept_encoding, [&](std::string_view item) {
    const std::size_t semicolon = item.find(';');
    const std::string_view coding = TrimBlanks(item.substr(0, semicolon));
    if (!EqualsIgnoringCase(coding, "gzip")) return;
    const std::string_view parameters = semicolon == std::string_view::npos ? "" : item.substr(semicolon + 1);
    const std::size_t q = parameters.find("q=");
    if (q == std::string_view::npos) {
      accepted = true;
      return;
    }
    // q=0, q=0.0, q=0.000 refuse it; anything else accepts.
    const std::string_view value = TrimBlanks(parameters.substr(q + 2));
    accepted = value.find_first_not_of("0.") != std::string_view::npos;
  });
  return accepted;
}

bool WorthCompressing(std::string_view content_type, std::size_t size) {
  if (size < 1024) return false;
  return content_type.starts_with("text/") || content_type.starts_with("application/json") ||
         content_type.starts_with("application/javascript") || content_type.starts_with("image/svg+xml");
}

std::optional<std::string> Gzip(std::string_view body) {
  z_stream stream{};
  const int level = body.size() > (std::size_t{1} << 20) ? Z_BEST_SPEED : Z_DEFAULT_COMPRESSION;
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return std::nullopt;
  std::string out(deflateBound(&stream, static_cast<uLong>(body.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  const std::size_t written = out.size() - stream.avail_out;
  deflateEnd(&stream);
  if (result != Z_STREAM_END) return std::nullopt;
  out.resize(written);
  return out;
}

}  // namespace sparktrace::admin
