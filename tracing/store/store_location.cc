#include "tracing/store/store_location.h"

#include <libpq-fe.h>
#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <map>
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

bool IsPassword(const PQconninfoOption& option) {
  // libpq marks the options it treats as secrets with dispchar "*" (password, sslpassword).
  return option.dispchar != nullptr && std::string_view(option.dispchar) == "*";
}

// Escapes what would otherwise read as URL structure in a displayed value.
std::string Escaped(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (c == '%' || c == '&' || c == '=' || c == '?' || c == '#' || c == '@' || c == '/' || c == ' ') {
      out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out;
}

// The URL shown in logs, errors, metrics and pages, rebuilt from what libpq parsed rather than edited
// from the text: whatever spelling libpq reads as a password (user info, password=, pass%77ord=,
// sslpassword=) is one of its secret options, and none of those is ever written out.
std::string DisplayOf(const PQconninfoOption* options) {
  std::map<std::string_view, std::string_view> set;
  bool has_secret = false;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr || *option->val == '\0') continue;
    if (IsPassword(*option)) {
      has_secret = true;
      continue;
    }
    set.emplace(option->keyword, option->val);
  }
  const auto take = [&set](std::string_view key) {
    const auto found = set.find(key);
    if (found == set.end()) return std::string_view();
    const std::string_view value = found->second;
    set.erase(found);
    return value;
  };
  std::string display = "postgresql://";
  const std::string_view user = take("user");
  if (!user.empty() || has_secret) display += Escaped(user) + (has_secret ? ":***" : "") + "@";
  const std::string_view host = take("host");
  const bool bare_ipv6 = host.find(':') != std::string_view::npos && host.find(',') == std::string_view::npos;
  display += bare_ipv6 ? "[" + std::string(host) + "]" : Escaped(host);
  if (const std::string_view port = take("port"); !port.empty()) display += ":" + std::string(port);
  display += "/" + Escaped(take("dbname"));
  char separator = '?';
  for (const auto& [key, value] : set) {
    display += separator + std::string(key) + "=" + Escaped(value);
    separator = '&';
  }
  return display;
}

// libpq's reason for refusing a URL, without the part of the URL it quotes ("invalid URI query
// parameter: \"pass...\""): that part can be a password spelled wrong.
std::string ReasonWithoutQuotes(const char* message) {
  std::string reason = message != nullptr ? message : "out of memory";
  if (const std::size_t quote = reason.find('"'); quote != std::string::npos) reason.resize(quote);
  while (!reason.empty() && (reason.back() == '\n' || reason.back() == ' ' || reason.back() == ':')) {
    reason.pop_back();
  }
  return reason.empty() ? "malformed" : reason;
}

}  // namespace

Result<StoreLocation> ParseStoreLocation(std::string_view text) {
  if (text.empty()) return InvalidArgument("empty store location (a file path or a postgresql:// URL)");
  StoreLocation location;
  if (IsPostgresUrl(text)) {
    location.backend = StoreBackend::kPostgres;
    location.target = std::string(text);
    char* message = nullptr;
    PQconninfoOption* options = PQconninfoParse(location.target.c_str(), &message);
    const std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> parsed(options, &PQconninfoFree);
    const std::unique_ptr<char, decltype(&PQfreemem)> owned_message(message, &PQfreemem);
    if (parsed == nullptr) {
      // Not a word of the URL itself: a malformed one may hold its password anywhere.
      return InvalidArgument(fmt::format("the PostgreSQL URL ({} characters) is not one libpq accepts: {}",
                                         location.target.size(), ReasonWithoutQuotes(message)));
    }
    location.display = DisplayOf(parsed.get());
    return location;
  }
  location.backend = StoreBackend::kSqlite;
  location.target = std::string(StartsWith(text, kSqliteScheme) ? text.substr(kSqliteScheme.size()) : text);
  if (location.target.empty()) return InvalidArgument(fmt::format("{}: no file path", text));
  if (const std::size_t scheme_end = location.target.find("://"); scheme_end != std::string::npos) {
    // The scheme alone: the rest of an unknown URL may hold a password.
    return InvalidArgument(
        fmt::format("unknown store scheme '{}://' (a file path, sqlite:// or postgresql://)",
                    location.target.substr(0, std::min<std::size_t>(scheme_end, 32))));
  }
  location.display = location.target;
  return location;
}

}  // namespace sparktrace::tracing::store
