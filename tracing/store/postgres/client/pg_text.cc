#include "tracing/store/postgres/client/pg_text.h"

#include <array>
#include <charconv>

#include "common/utf8.h"

namespace sparktrace::tracing::store {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  while (!text.empty()) {
    // NUL is ASCII, but PostgreSQL's text cannot hold it: replaced like an invalid byte.
    const std::size_t length = text.front() == '\0' ? 0 : Utf8SequenceLength(text);
    if (length == 0) {
      clean += kReplacement;
      text.remove_prefix(1);
    } else {
      clean.append(text.substr(0, length));
      text.remove_prefix(length);
    }
  }
  return clean;
}

void CopyRows::Separate() {
  if (row_started_) out_ += '\t';
  row_started_ = true;
}

namespace {

// `text` made valid UTF-8 for PostgreSQL's text: plain ASCII without NUL, nearly every value, as it is;
// the rest through ValidUtf8, into `cleaned`, which the view then points into.
std::string_view AsValidUtf8(std::string_view text, std::string& cleaned) {
  for (const char c : text) {
    if (c == '\0' || (static_cast<unsigned char>(c) & 0x80) != 0) {
      cleaned = ValidUtf8(text);
      return cleaned;
    }
  }
  return text;
}

}  // namespace

void CopyRows::Text(std::string_view text) {
  Separate();
  std::string cleaned;
  text = AsValidUtf8(text, cleaned);
  // The runs between the characters COPY needs escaped are appended whole.
  std::size_t run = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string_view escaped;
    switch (text[i]) {
      case '\\':
        escaped = "\\\\";
        break;
      case '\t':
        escaped = "\\t";
        break;
      case '\n':
        escaped = "\\n";
        break;
      case '\r':
        escaped = "\\r";
        break;
      default:
        continue;
    }
    out_.append(text.substr(run, i - run));
    out_.append(escaped);
    run = i + 1;
  }
  out_.append(text.substr(run));
}

void AppendLowerHex(std::string& out, std::string_view bytes) {
  static constexpr std::string_view kDigits = "0123456789abcdef";
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 0xF];
  }
}

void CopyRows::Null() {
  Separate();
  out_ += "\\N";
}

void CopyRows::Int(std::int64_t value) {
  Separate();
  std::array<char, 24> digits{};  // an int64 has at most 20 characters with its sign
  const auto written = std::to_chars(digits.data(), digits.data() + digits.size(), value);
  out_.append(digits.data(), written.ptr);
}

void CopyRows::Bytes(std::string_view bytes) {
  Separate();
  out_ += "\\\\x";
  AppendLowerHex(out_, bytes);
}

void CopyRows::Hex(std::string_view bytes) {
  Separate();
  AppendLowerHex(out_, bytes);
}

void CopyRows::End() {
  out_ += '\n';
  row_started_ = false;
}

namespace {

void AppendArrayElement(std::string& literal, std::string_view item) {
  std::string cleaned;
  item = AsValidUtf8(item, cleaned);
  literal += '"';
  for (const char c : item) {
    if (c == '"' || c == '\\') literal += '\\';
    literal += c;
  }
  literal += '"';
}

}  // namespace

std::string TextArray(std::span<const std::string> items) {
  std::string literal = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) literal += ',';
    AppendArrayElement(literal, items[i]);
  }
  literal += '}';
  return literal;
}

std::string TextArray(std::span<const std::optional<std::string>> items) {
  std::string literal = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) literal += ',';
    if (items[i]) {
      AppendArrayElement(literal, *items[i]);
    } else {
      literal += "NULL";  // unquoted: the null element ("NULL" quoted is the text)
    }
  }
  literal += '}';
  return literal;
}

std::string IntArray(std::span<const std::int64_t> items) {
  std::string literal = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) literal += ',';
    literal += std::to_string(items[i]);
  }
  literal += '}';
  return literal;
}

std::optional<std::string_view> HexOfByteaText(std::string_view text) {
  if (!text.starts_with("\\x") || text.size() % 2 != 0) return std::nullopt;
  return text.substr(2);
}

std::optional<std::string> ByteaFromText(std::string_view text) {
  const auto hex = HexOfByteaText(text);
  if (!hex) return std::nullopt;
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string bytes;
  bytes.reserve(hex->size() / 2);
  for (std::size_t i = 0; i < hex->size(); i += 2) {
    const int high = nibble((*hex)[i]);
    const int low = nibble((*hex)[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes += static_cast<char>((high << 4) | low);
  }
  return bytes;
}

}  // namespace sparktrace::tracing::store
