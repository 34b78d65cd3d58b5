#pragma once
// Who may open the trace view when the admin port has a token (--admin-token): the token as a
// bearer header, or the HttpOnly cookie that a page opened once with `?token=` sets. Pure functions;
// thread-safe. The token never appears in a log line or an answer.

#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace sparktrace::admin {

inline constexpr std::string_view kTokenCookie = "sparktrace_token";

// An admin token must travel unchanged in a header, a query parameter and a cookie: 16 or more of
// A-Z a-z 0-9 . _ ~ - (e.g. `openssl rand -hex 24`). The error says so without echoing the value.
Result<void> ValidateAdminToken(std::string_view token);

// Equal in a time that depends on the lengths only, not on where the first difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The token an `Authorization: Bearer …` header value carries, else nullopt.
std::optional<std::string_view> BearerToken(std::string_view authorization);
// The value of one cookie in a `Cookie:` header value, else nullopt.
std::optional<std::string_view> CookieValue(std::string_view cookie_header, std::string_view name);

// A query string's `token` parameter (percent-decoded), and the query without it.
struct TokenLogin {
  std::optional<std::string> token;
  std::string rest_of_query;
};
TokenLogin SplitTokenParameter(std::string_view query);

}  // namespace sparktrace::admin
