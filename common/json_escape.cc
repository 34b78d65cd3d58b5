#include "common/json_escape.h"

#include <spdlog/fmt/fmt.h>

#include <iterator>

#include "common/utf8.h"

namespace sparktrace {
namespace {

bool NeedsEscaping(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\') return true;
  }
  return false;
}

}  // namespace

void AppendJsonEscaped(std::string& out, std::string_view text) {
  // Most text is ids, names and numbers in plain ASCII: copied whole.
  if (!NeedsEscaping(text)) {
    out.append(text);
    return;
  }
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t length = Utf8SequenceLength(text.substr(i));
      if (length == 0) {
        out += "\xef\xbf\xbd";  // U+FFFD
        ++i;
      } else {
        out.append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
    ++i;
  }
}

void AppendJsonString(std::string& out, std::string_view text) {
  out.push_back('"');
  AppendJsonEscaped(out, text);
  out.push_back('"');
}

}  // namespace sparktrace
