#include "admin/ui_access.h"

#include <algorithm>
#include <cctype>

#include "common/url_codec.h"

namespace sparktrace::admin {

Result<void> ValidateAdminToken(std::string_view token) {
  constexpr std::size_t kMinimumLength = 16;
  const bool allowed = std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '~' || c == '-';
  });
  if (!allowed) return InvalidArgument("use only A-Z a-z 0-9 . _ ~ - (it travels in a cookie and a URL)");
  if (token.size() < kMinimumLength) {
    return InvalidArgument("use at least 16 characters, e.g. the output of `openssl rand -hex 24`");
  }
  return {};
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    difference |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return difference == 0;
}

std::optional<std::string_view> BearerToken(std::string_view authorization) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size()) return std::nullopt;
  for (std::size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != kScheme[i]) return std::nullopt;
  }
  std::string_view token = authorization.substr(kScheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  if (token.empty()) return std::nullopt;
  return token;
}

std::optional<std::string_view> CookieValue(std::string_view cookie_header, std::string_view name) {
  while (!cookie_header.empty()) {
    const std::size_t semicolon = cookie_header.find(';');
    std::string_view pair = cookie_header.substr(0, semicolon);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    const std::size_t equals = pair.find('=');
    if (equals != std::string_view::npos && pair.substr(0, equals) == name) return pair.substr(equals + 1);
    if (semicolon == std::string_view::npos) break;
    cookie_header.remove_prefix(semicolon + 1);
  }
  return std::nullopt;
}

TokenLogin SplitTokenParameter(std::string_view query) {
  TokenLogin login;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view item = query.substr(0, amp);
    if (item.starts_with("token=")) {
      login.token = PercentDecode(item.substr(6), /*plus_is_space=*/true);
    } else if (!item.empty()) {
      if (!login.rest_of_query.empty()) login.rest_of_query += '&';
      login.rest_of_query += item;
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return login;
}

}  // namespace sparktrace::admin
