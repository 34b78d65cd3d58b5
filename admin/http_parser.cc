#include "admin/http_parser.h"

#include <algorithm>
#include <limits>

#include "common/text_trim.h"

namespace sparktrace::admin {
namespace {

// RFC 9110 5.6.2: the characters of a token (method, header name).
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return kSymbols.find(c) != std::string_view::npos;
}

bool IsToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), IsTokenChar);
}

// A request target: visible ASCII only (no space, no control character, no raw UTF-8).
bool IsTargetText(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7f; });
}

// A field value: visible characters, space, tab and obs-text; a CR, LF, NUL or other control
// character inside would let a value smuggle a header into whatever relays it.
bool IsFieldValueText(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte == '\t' || (byte >= 0x20 && byte != 0x7f);
  });
}

bool StartsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && EqualsIgnoreCase(text.substr(0, prefix.size()), prefix);
}

// Whether any comma-separated token of any `name` header equals `token`.
bool HasToken(const RequestHead& head, std::string_view name, std::string_view token) {
  for (const HttpHeader& header : head.headers) {
    if (!EqualsIgnoreCase(header.name, name)) continue;
    std::string_view list = header.value;
    while (!list.empty()) {
      const std::size_t comma = list.find(',');
      if (EqualsIgnoreCase(TrimBlanks(list.substr(0, comma)), token)) return true;
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return false;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

int HeadErrorStatus(HeadError error) {
  switch (error) {
    case HeadError::kNone:
      return 200;
    case HeadError::kBadRequest:
      return 400;
    case HeadError::kUriTooLong:
      return 414;
    case HeadError::kHeadersTooLarge:
      return 431;
    case HeadError::kVersionNotSupported:
      return 505;
  }
  return 400;
}

std::optional<std::string_view> RequestHead::Header(std::string_view name) const {
  for (const HttpHeader& header : headers) {
    if (EqualsIgnoreCase(header.name, name)) return std::string_view(header.value);
  }
  return std::nullopt;
}

bool RequestHead::KeepAlive() const {
  if (HasToken(*this, "Connection", "close")) return false;
  return version_minor >= 1 || HasToken(*this, "Connection", "keep-alive");
}

bool RequestHead::ExpectsContinue() const {
  const auto expect = Header("Expect");
  return expect && EqualsIgnoreCase(TrimBlanks(*expect), "100-continue");
}

void RequestHeadParser::Reset() {
  line_.clear();
  prefix_bytes_ = 0;
  header_bytes_ = 0;
  have_request_line_ = false;
  started_ = false;
  error_ = HeadError::kNone;
  head_ = RequestHead{};
}

RequestHeadParser::Status RequestHeadParser::Fail(HeadError error) {
  error_ = error;
  line_.clear();
  line_.shrink_to_fit();
  return Status::kError;
}

RequestHeadParser::Progress RequestHeadParser::Feed(std::string_view piece) {
  std::size_t used = 0;
  while (used < piece.size()) {
    started_ = true;
    const std::string_view rest = piece.substr(used);
    const std::size_t newline = rest.find('\n');
    const std::size_t take = newline == std::string_view::npos ? rest.size() : newline + 1;
    // The budget of the part being received, checked before the bytes are kept: a line that never
    // ends is refused at its limit, whatever size the pieces come in.
    const std::size_t budget = have_request_line_ ? limits_.max_header_bytes - header_bytes_
                                                  : limits_.max_request_line_bytes - prefix_bytes_;
    if (line_.size() + take > budget) {
      return {Fail(have_request_line_ ? HeadError::kHeadersTooLarge : HeadError::kUriTooLong), used + take};
    }
    line_.append(rest.substr(0, take));
    used += take;
    if (newline == std::string_view::npos) break;

    std::string_view line = line_;
    line.remove_suffix(1);                                   // '\n'
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // a bare LF ends a line too
    const bool header_line = have_request_line_;
    const std::size_t line_bytes = line_.size();
    const Status status = TakeLine(line);
    if (status == Status::kError) return {status, used};
    if (header_line) header_bytes_ += line_bytes;
    line_.clear();
    if (status == Status::kDone) return {status, used};
  }
  return {Status::kNeedMore, used};
}

RequestHeadParser::Status RequestHeadParser::TakeLine(std::string_view line) {
  if (!have_request_line_) {
    if (line.empty()) {
      prefix_bytes_ += line_.size();  // a client's stray CRLF after its previous body
      return Status::kNeedMore;
    }
    if (!ParseRequestLine(line)) return Status::kError;
    have_request_line_ = true;
    return Status::kNeedMore;
  }
  if (line.empty()) return Status::kDone;
  // obs-fold (a continuation line) is refused, as RFC 9112 5.2 allows: it hides one header in another.
  if (line.front() == ' ' || line.front() == '\t') return Fail(HeadError::kBadRequest);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Fail(HeadError::kBadRequest);
  const std::string_view name = line.substr(0, colon);
  // No whitespace between the name and the colon (RFC 9112 5.1): IsToken refuses it.
  if (!IsToken(name)) return Fail(HeadError::kBadRequest);
  const std::string_view value = TrimBlanks(line.substr(colon + 1));
  if (!IsFieldValueText(value)) return Fail(HeadError::kBadRequest);
  if (head_.headers.size() >= limits_.max_headers) return Fail(HeadError::kHeadersTooLarge);
  head_.headers.push_back(HttpHeader{std::string(name), std::string(value)});
  return Status::kNeedMore;
}

bool RequestHeadParser::ParseRequestLine(std::string_view line) {
  const std::size_t first_space = line.find(' ');
  const std::size_t last_space = line.rfind(' ');
  if (first_space == std::string_view::npos || first_space == last_space) {
    Fail(HeadError::kBadRequest);  // HTTP/0.9 ("GET /") or a line without a target
    return false;
  }
  const std::string_view method = line.substr(0, first_space);
  std::string_view target = line.substr(first_space + 1, last_space - first_space - 1);
  const std::string_view version = line.substr(last_space + 1);
  if (!IsToken(method) || !IsTargetText(target)) {
    Fail(HeadError::kBadRequest);
    return false;
  }
  // "HTTP/" DIGIT "." DIGIT; 1.x above 1.1 is served as 1.1 (RFC 9110 2.5), other majors are not.
  const bool well_formed = version.size() == 8 && version.substr(0, 5) == "HTTP/" && version[5] >= '0' &&
                           version[5] <= '9' && version[6] == '.' && version[7] >= '0' && version[7] <= '9';
  if (!well_formed) {
    Fail(HeadError::kBadRequest);
    return false;
  }
  if (version[5] != '1') {
    Fail(HeadError::kVersionNotSupported);
    return false;
  }
  head_.version_minor = std::min(version[7] - '0', 1);

  // absolute-form (what a client talking to a proxy sends): the authority is dropped, the Host
  // header names the host (RFC 9112 3.2.2).
  for (const std::string_view scheme : {std::string_view("http://"), std::string_view("https://")}) {
    if (StartsWithIgnoreCase(target, scheme)) {
      target.remove_prefix(scheme.size());
      const std::size_t path_start = target.find_first_of("/?");
      target = path_start == std::string_view::npos ? std::string_view() : target.substr(path_start);
      break;
    }
  }
  if (!target.empty() && target.front() != '/' && target != "*" && target.front() != '?') {
    Fail(HeadError::kBadRequest);  // authority-form (CONNECT) and other shapes this server does not route
    return false;
  }
  const std::size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  if (path.empty()) path = "/";  // absolute-form without a path, or "?query" alone
  head_.path = std::string(path);
  if (question != std::string_view::npos) head_.query = std::string(target.substr(question + 1));
  head_.method = std::string(method);
  return true;
}

BodyLength RequestBodyLength(const RequestHead& head) {
  if (head.Header("Transfer-Encoding")) return BodyLength{0, 411};
  std::optional<std::uint64_t> length;
  for (const HttpHeader& header : head.headers) {
    if (!EqualsIgnoreCase(header.name, "Content-Length")) continue;
    std::string_view list = header.value;
    while (true) {
      const std::size_t comma = list.find(',');
      const std::string_view item = TrimBlanks(list.substr(0, comma));
      if (item.empty() || !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return BodyLength{0, 400};
      }
      // Too many digits for any limit: kept as the largest length, so that it is refused as too large.
      std::uint64_t value = 0;
      for (const char digit : item) {
        const auto d = static_cast<std::uint64_t>(digit - '0');
        value = value > (std::numeric_limits<std::uint64_t>::max() - d) / 10 ? std::numeric_limits<std::uint64_t>::max()
                                                                              : value * 10 + d;
      }
      // Lengths that disagree are how one request is smuggled inside another (RFC 9112 6.3).
      if (length && *length != value) return BodyLength{0, 400};
      length = value;
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return BodyLength{length.value_or(0), 0};
}

}  // namespace sparktrace::admin
