#include "common/json_escape.h"

#include <spdlog/fmt/fmt.h>

#include <cstdint>
#include <cstring>
#include <iterator>

#include "common/utf8.h"

namespace sparktrace {
namespace {

bool ByteNeedsEscaping(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte >= 0x80 || c == '"' || c == '\\';
}

// Eight bytes at a time (the classic "has a zero byte" bit tricks): a 20,000-span page writes
// hundreds of thousands of keys and values, and a byte-at-a-time scan was a tenth of its answer.
constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

constexpr std::uint64_t HasZeroByte(std::uint64_t word) { return (word - kOnes) & ~word & kHighBits; }

constexpr bool WordNeedsEscaping(std::uint64_t word) {
  // A byte >= 0x80 sets its own high bit; then, among bytes < 0x80: below 0x20, a quote, a backslash.
  const std::uint64_t below_space = (word - 0x20 * kOnes) & ~word & kHighBits;
  return ((word & kHighBits) | below_space | HasZeroByte(word ^ ('"' * kOnes)) | HasZeroByte(word ^ ('\\' * kOnes))) != 0;
}

bool NeedsEscaping(std::string_view text) {
  std::size_t i = 0;
  for (; i + sizeof(std::uint64_t) <= text.size(); i += sizeof(std::uint64_t)) {
    std::uint64_t word = 0;
    std::memcpy(&word, text.data() + i, sizeof(word));
    if (WordNeedsEscaping(word)) return true;
  }
  for (; i < text.size(); ++i) {
    if (ByteNeedsEscaping(text[i])) return true;
  }
  return false;
}

// Text that needs escaping, a byte or sequence at a time (both callers have already scanned it).
void AppendEscapedBytes(std::string& out, std::string_view text) {
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

}  // namespace

void AppendJsonEscaped(std::string& out, std::string_view text) {
  // Most text is ids, names and numbers in plain ASCII: copied whole.
  if (!NeedsEscaping(text)) {
    out.append(text);
    return;
  }
  AppendEscapedBytes(out, text);
}

void AppendJsonString(std::string& out, std::string_view text) {
  if (!NeedsEscaping(text)) {
    // The common case in one append: quotes and text placed without three capacity checks.
    const std::size_t at = out.size();
    out.resize(at + text.size() + 2);
    out[at] = '"';
    // An empty view may hold a null pointer, which memcpy must not be given even for 0 bytes.
    if (!text.empty()) std::memcpy(out.data() + at + 1, text.data(), text.size());
    out[at + text.size() + 1] = '"';
    return;
  }
  out.push_back('"');
  AppendEscapedBytes(out, text);
  out.push_back('"');
}

}  // namespace sparktrace
