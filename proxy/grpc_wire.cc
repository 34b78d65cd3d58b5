#include "proxy/grpc_wire.h"

#include <charconv>

#include <nghttp2/nghttp2.h>

#include "common/url_codec.h"

namespace sparktrace::proxy {

namespace {

// `amount` of `Unit` in nanoseconds, the longest representable when it does not fit (8 digits of
// hours are ~11,000 years; int64 nanoseconds end at ~292).
template <typename Unit>
std::chrono::nanoseconds SaturatedNanoseconds(std::int64_t amount) {
  using std::chrono::nanoseconds;
  if (Unit(amount) > std::chrono::duration_cast<Unit>(nanoseconds::max())) return nanoseconds::max();
  return std::chrono::duration_cast<nanoseconds>(Unit(amount));
}

}  // namespace

std::optional<std::chrono::nanoseconds> ParseGrpcTimeout(std::string_view value) {
  if (value.size() < 2 || value.size() > 9) return std::nullopt;
  const std::string_view digits = value.substr(0, value.size() - 1);
  // Digits only: from_chars would take a leading '-'.
  for (const char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  std::int64_t amount = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), amount);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  switch (value.back()) {
    case 'H': return SaturatedNanoseconds<std::chrono::hours>(amount);
    case 'M': return SaturatedNanoseconds<std::chrono::minutes>(amount);
    case 'S': return SaturatedNanoseconds<std::chrono::seconds>(amount);
    case 'm': return SaturatedNanoseconds<std::chrono::milliseconds>(amount);
    case 'u': return SaturatedNanoseconds<std::chrono::microseconds>(amount);
    case 'n': return std::chrono::nanoseconds(amount);
    default: return std::nullopt;
  }
}

std::optional<StatusCode> ParseGrpcStatus(std::string_view value) {
  int code = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), code);
  if (error != std::errc() || end != value.data() + value.size() || code < 0 || code > 99) return std::nullopt;
  return static_cast<StatusCode>(code);
}

StatusCode StatusForResetCode(std::uint32_t error_code) {
  switch (error_code) {
    case NGHTTP2_REFUSED_STREAM: return StatusCode::kUnavailable;
    case NGHTTP2_CANCEL: return StatusCode::kCancelled;
    case NGHTTP2_ENHANCE_YOUR_CALM: return StatusCode::kResourceExhausted;
    case NGHTTP2_INADEQUATE_SECURITY: return StatusCode::kPermissionDenied;
    default: return StatusCode::kInternal;
  }
}

StatusCode StatusForHttpStatus(int http_status) {
  switch (http_status) {
    case 400: return StatusCode::kInternal;
    case 401: return StatusCode::kUnauthenticated;
    case 403: return StatusCode::kPermissionDenied;
    case 404: return StatusCode::kUnimplemented;
    case 429:
    case 502:
    case 503:
    case 504: return StatusCode::kUnavailable;
    default: return StatusCode::kUnknown;
  }
}

namespace {

constexpr std::string_view kHex = "0123456789ABCDEF";

}  // namespace

std::string PercentEncodeGrpcMessage(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte <= 0x7e && c != '%') {
      out += c;
    } else {
      out += '%';
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out;
}

std::string PercentDecodeGrpcMessage(std::string_view value) { return PercentDecode(value); }

}  // namespace sparktrace::proxy
