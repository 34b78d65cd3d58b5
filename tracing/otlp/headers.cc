#include "tracing/otlp/headers.h"

#include <algorithm>
#include <array>

#include "common/hex_digit.h"
#include "common/text_trim.h"

namespace sparktrace::tracing::otlp {
namespace {

// RFC 3986 percent-decoding; '+' stays '+' (this is not form encoding).
Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return InvalidArgument("truncated %-escape");
    const int high = HexDigitValue(text[i + 1]);
    const int low = HexDigitValue(text[i + 2]);
    if (high < 0 || low < 0) return InvalidArgument("bad %-escape");
    out.push_back(static_cast<char>(high * 16 + low));
    i += 2;
  }
  return out;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; });
  return out;
}

constexpr std::array<std::string_view, 7> kReservedKeys = {
    "content-type", "te", "host", "connection", "user-agent", "keep-alive", "content-length"};

}  // namespace

Result<std::pair<std::string, std::string>> ParseOtlpHeader(std::string_view flag_value) {
  const auto equals = flag_value.find('=');
  if (equals == std::string_view::npos) return InvalidArgument("--otlp-header: expected key=value");
  std::string key = Lower(TrimBlanks(flag_value.substr(0, equals)));
  if (key.empty()) return InvalidArgument("--otlp-header: empty key");
  return std::make_pair(std::move(key), std::string(flag_value.substr(equals + 1)));
}

Result<std::vector<std::pair<std::string, std::string>>> ParseOtelKeyValueList(std::string_view text) {
  std::vector<std::pair<std::string, std::string>> entries;
  if (TrimBlanks(text).empty()) return entries;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string_view entry =
        text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    const std::string position = "entry " + std::to_string(entries.size() + 1);
    const auto equals = entry.find('=');
    if (equals == std::string_view::npos) return InvalidArgument(position + ": expected key=value");
    auto key = PercentDecode(TrimBlanks(entry.substr(0, equals)));
    if (!key.ok()) return InvalidArgument(position + ": key: " + key.error().message);
    if (TrimBlanks(*key).empty()) return InvalidArgument(position + ": empty key");
    auto value = PercentDecode(TrimBlanks(entry.substr(equals + 1)));
    if (!value.ok()) return InvalidArgument(position + " (" + *key + "): value: " + value.error().message);
    entries.emplace_back(std::move(*key), std::move(*value));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return entries;
}

Result<void> ValidateOtlpHeaders(const OtlpHeaders& headers) {
  for (const auto& [key, value] : headers) {
    if (key.empty()) return InvalidArgument("OTLP header with an empty name");
    const bool key_ok = std::all_of(key.begin(), key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    });
    if (!key_ok)
      return InvalidArgument("OTLP header name '" + key +
                             "': only lower-case letters, digits, '-', '_', '.'");
    if (key.starts_with("grpc-") ||
        std::find(kReservedKeys.begin(), kReservedKeys.end(), key) != kReservedKeys.end()) {
      return InvalidArgument("OTLP header '" + key + "' is set by the exporter itself");
    }
    if (key.ends_with("-bin")) continue;
    const bool value_ok = std::all_of(value.begin(), value.end(), [](char c) {
      // gRPC accepts printable ASCII only in text metadata; HTTP/1.1 is no looser in practice.
      const auto byte = static_cast<unsigned char>(c);
      return byte >= 0x20 && byte < 0x7f;
    });
    // The value is not quoted: it may be a credential.
    if (!value_ok) return InvalidArgument("OTLP header '" + key + "': value must be printable ASCII");
  }
  return {};
}

}  // namespace sparktrace::tracing::otlp
