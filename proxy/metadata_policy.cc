#include "proxy/metadata_policy.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace sparktrace::proxy {
namespace {

std::string Lowercase(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

}  // namespace

bool IsSecretHeader(std::string_view key) {
  static constexpr std::array<std::string_view, 4> kExact = {
      "authorization", "authentication", "cookie", "proxy-authorization"};
  static constexpr std::array<std::string_view, 8> kFragments = {
      "token", "password", "passwd", "secret", "api-key", "apikey", "credential", "session-key"};
  const std::string lower = Lowercase(key);
  if (std::find(kExact.begin(), kExact.end(), lower) != kExact.end()) return true;
  return std::any_of(kFragments.begin(), kFragments.end(),
                     [&](std::string_view fragment) { return lower.find(fragment) != std::string::npos; });
}

std::string DescribeHeadersForLog(const ClientMetadata& metadata) {
  std::string text;
  for (const auto& [key, value] : metadata) {
    if (!text.empty()) text += ' ';
    text += key;
    text += '=';
    if (IsSecretHeader(key)) {
      text += "<redacted>";
    } else if (key.ends_with("-bin")) {
      text += "<" + std::to_string(value.size()) + " base64 chars>";
    } else {
      text += value;
    }
  }
  return text;
}

}  // namespace sparktrace::proxy
