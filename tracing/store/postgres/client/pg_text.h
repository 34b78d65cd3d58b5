#pragma once
// Text encodings the PostgreSQL store sends: COPY's text format, array literals for `= ANY($1)`
// parameters, and the UTF-8 clean-up PostgreSQL needs (a text value may hold neither NUL bytes nor
// invalid UTF-8; a span name copied from a client's bytes may hold both, and one bad value must not
// fail a whole batch).
//
// Pure functions.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace sparktrace::tracing::store {

// `text` as valid UTF-8 without NUL: each invalid sequence and each NUL becomes U+FFFD.
std::string ValidUtf8(std::string_view text);

// Appends rows in COPY's text format to `out`: fields separated by tabs, text made valid UTF-8 with
// backslash, tab, newline and CR escaped, \N for NULL, each row ended by End().
class CopyRows {
 public:
  explicit CopyRows(std::string& out) : out_(out) {}
  void Text(std::string_view text);
  void Null();
  void Int(std::int64_t value);
  // A bytea value in hex input form (\\x…, the backslash escaped for COPY).
  void Bytes(std::string_view bytes);
  // `bytes` as lower-case hex digits, as a uuid's input reads them.
  void Hex(std::string_view bytes);
  void End();

 private:
  void Separate();
  std::string& out_;
  bool row_started_ = false;
};

// {"a","b"}: a text[] literal; every element quoted, so any text is safe.
std::string TextArray(std::span<const std::string> items);
// The same with NULL elements (nullopt), for unnest() rows with NULL columns.
std::string TextArray(std::span<const std::optional<std::string>> items);
// {1,2}: a bigint[] literal.
std::string IntArray(std::span<const std::int64_t> items);

// Appends the lower-case hex digits of `bytes` (what decode(…, 'hex') reads back).
void AppendLowerHex(std::string& out, std::string_view bytes);

// A bytea value as a text-format result gives it (\x followed by lower-case hex) back into its bytes;
// nullopt when `text` is not that form.
std::optional<std::string> ByteaFromText(std::string_view text);
// The lower-case hex digits of a bytea's text form (what follows \x): ids are stored as bytea and
// handed around as hex; nullopt when `text` is not that form.
std::optional<std::string_view> HexOfByteaText(std::string_view text);

}  // namespace sparktrace::tracing::store
