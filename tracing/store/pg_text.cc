#include "tracing/store/pg_text.h"

namespace sparktrace::tracing::store {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at the start of `text` (RFC 3629: no overlongs, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one.
std::size_t ValidSequenceLength(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return lead == 0 ? 0 : 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  if (byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string ValidUtf8(std::string_view text) {
  std::string clean;
  clean.reserve(text.size());
  while (!text.empty()) {
    const std::size_t length = ValidSequenceLength(text);
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

void CopyRows::Text(std::string_view text) {
  Separate();
  // Nearly every value is plain ASCII; only the rest pays for the UTF-8 check.
  std::string cleaned;
  for (const char c : text) {
    if (c == '\0' || (static_cast<unsigned char>(c) & 0x80) != 0) {
      cleaned = ValidUtf8(text);
      text = cleaned;
      break;
    }
  }
  for (const char c : text) {
    switch (c) {
      case '\\':
        out_ += "\\\\";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      default:
        out_ += c;
    }
  }
}

void CopyRows::Null() {
  Separate();
  out_ += "\\N";
}

void CopyRows::Int(std::int64_t value) {
  Separate();
  out_ += std::to_string(value);
}

void CopyRows::End() {
  out_ += '\n';
  row_started_ = false;
}

std::string TextArray(std::span<const std::string> items) {
  std::string literal = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) literal += ',';
    literal += '"';
    for (const char c : ValidUtf8(items[i])) {
      if (c == '"' || c == '\\') literal += '\\';
      literal += c;
    }
    literal += '"';
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

}  // namespace sparktrace::tracing::store
