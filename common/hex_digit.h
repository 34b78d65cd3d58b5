#pragma once
// One hexadecimal digit's value, for the decoders that read hex by hand (percent-escapes in URLs,
// the store's trace and span ids): a character at a time, without a from_chars call per digit.

namespace sparktrace {

// 0-15 for 0-9, a-f, A-F; -1 for anything else.
constexpr int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace sparktrace
