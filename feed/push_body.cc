#include "feed/push_body.h"

#include <variant>

#include "listener/correlate/span_ids.h"

namespace sparktrace::feed {

using listener::correlate::ApplicationKey;
using listener::events::ApplicationStart;
using listener::events::EventParser;
using listener::events::IgnoredEvent;
using listener::events::SparkEvent;

namespace {

constexpr std::size_t kMaxStreamNameBytes = 200;

bool AllowedInStreamName(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '.':
    case '_':
    case ':':
    case '@':
    case '/':
    case '+':
    case '-':
      return true;
    default:
      return false;
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    if (i + 2 >= text.size()) return {};
    const int high = HexValue(text[i + 1]);
    const int low = HexValue(text[i + 2]);
    if (high < 0 || low < 0) return {};
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

bool Blank(std::string_view line) { return line.find_first_not_of(" \t\r") == std::string_view::npos; }

}  // namespace

ParsedPush ParsePushBody(std::string_view body, EventParser& parser) {
  ParsedPush parsed;
  std::size_t begin = 0;
  while (begin < body.size()) {
    std::size_t end = body.find('\n', begin);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = body.substr(begin, end - begin);
    begin = end + 1;
    if (Blank(line)) continue;
    Result<SparkEvent> event = parser.Parse(line);
    if (!event.ok()) {
      ++parsed.malformed;
      continue;
    }
    ++parsed.accepted;
    if (std::holds_alternative<IgnoredEvent>(*event)) continue;
    if (const auto* start = std::get_if<ApplicationStart>(&*event); start && !parsed.application) {
      if (!start->app_id.empty()) parsed.application = ApplicationKey(start->app_id, start->attempt_id);
    }
    parsed.events.push_back(std::move(*event));
  }
  return parsed;
}

Result<std::string> ValidateStreamName(std::string_view name) {
  if (name.empty()) return InvalidArgument("empty application id");
  if (name.size() > kMaxStreamNameBytes) {
    return InvalidArgument("application id longer than " + std::to_string(kMaxStreamNameBytes) +
                           " characters");
  }
  for (char c : name) {
    if (!AllowedInStreamName(c))
      return InvalidArgument("application id has characters outside [A-Za-z0-9._:@/+-]");
  }
  return std::string(name);
}

std::optional<std::string> QueryParameter(std::string_view query, std::string_view name) {
  std::size_t begin = 0;
  while (begin <= query.size()) {
    std::size_t end = query.find('&', begin);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(begin, end - begin);
    const std::size_t equals = pair.find('=');
    const std::string_view key = pair.substr(0, equals);
    if (key == name) {
      return equals == std::string_view::npos ? std::string() : PercentDecoded(pair.substr(equals + 1));
    }
    begin = end + 1;
  }
  return std::nullopt;
}

}  // namespace sparktrace::feed
