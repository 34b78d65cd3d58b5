#include "tracing/store/store_location.h"

#include <libpq-fe.h>
#include <spdlog/fmt/fmt.h>

#include <memory>

namespace sparktrace::tracing::store {
namespace {

constexpr std::string_view kSqliteScheme = "sqlite://";

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool IsPostgresUrl(std::string_view text) {
  return StartsWith(text, "postgresql://") || StartsWith(text, "postgres://");
}

// Replaces the value of every `password=` query parameter.
std::string RedactPasswordParameters(std::string url) {
  const std::size_t query = url.find('?');
  if (query == std::string::npos) return url;
  std::size_t at = query + 1;
  while (at < url.size()) {
    std::size_t end = url.find('&', at);
    if (end == std::string::npos) end = url.size();
    constexpr std::string_view kKey = "password=";
    if (std::string_view(url).substr(at, end - at).substr(0, kKey.size()) == kKey) {
      url.replace(at + kKey.size(), end - at - kKey.size(), "***");
      end = at + kKey.size() + 3;
    }
    at = end + 1;
  }
  return url;
}

}  // namespace

std::string RedactStoreUrl(std::string_view url) {
  std::string redacted(url);
  const std::size_t scheme_end = redacted.find("://");
  if (scheme_end != std::string::npos) {
    const std::size_t authority = scheme_end + 3;
    // The user info ends at the last '@' before the path or query (a password may hold '@' only
    // percent-encoded, but be generous).
    std::size_t authority_end = redacted.find_first_of("/?", authority);
    if (authority_end == std::string::npos) authority_end = redacted.size();
    const std::size_t at = redacted.rfind('@', authority_end);
    if (at != std::string::npos && at >= authority) {
      const std::size_t colon = redacted.find(':', authority);
      if (colon != std::string::npos && colon < at) redacted.replace(colon + 1, at - colon - 1, "***");
    }
  }
  return RedactPasswordParameters(std::move(redacted));
}

Result<StoreLocation> ParseStoreLocation(std::string_view text) {
  if (text.empty()) return InvalidArgument("empty store location (a file path or a postgresql:// URL)");
  StoreLocation location;
  if (IsPostgresUrl(text)) {
    location.backend = StoreBackend::kPostgres;
    location.target = std::string(text);
    location.display = RedactStoreUrl(text);
    char* message = nullptr;
    PQconninfoOption* options = PQconninfoParse(location.target.c_str(), &message);
    const std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> parsed(options, &PQconninfoFree);
    const std::unique_ptr<char, decltype(&PQfreemem)> owned_message(message, &PQfreemem);
    if (parsed == nullptr) {
      // libpq's message may quote the part it could not read; never echo the URL itself.
      std::string reason = message != nullptr ? message : "out of memory";
      while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ')) reason.pop_back();
      if (reason.find(location.target) != std::string::npos) reason = "malformed URL";
      return InvalidArgument(fmt::format("{}: not a PostgreSQL URL libpq accepts: {}", location.display,
                                         RedactStoreUrl(reason)));
    }
    return location;
  }
  location.backend = StoreBackend::kSqlite;
  location.target = std::string(StartsWith(text, kSqliteScheme) ? text.substr(kSqliteScheme.size()) : text);
  if (location.target.empty()) return InvalidArgument(fmt::format("{}: no file path", text));
  if (location.target.find("://") != std::string::npos) {
    return InvalidArgument(fmt::format("{}: unknown store scheme (a file path, sqlite:// or postgresql://)",
                                       RedactStoreUrl(text)));
  }
  location.display = location.target;
  return location;
}

}  // namespace sparktrace::tracing::store
