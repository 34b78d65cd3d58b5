#include "listener/correlate/span_ids.h"

#include <algorithm>

#include "tracing/sha256.h"

namespace sparktrace::listener::correlate {
namespace {

constexpr std::string_view kSeparator = "\x1f";

template <typename Id>
Id LeadingBytes(const tracing::Sha256Digest& digest) {
  Id id{};
  std::copy_n(digest.begin(), id.size(), id.begin());
  // All zeros is invalid in W3C/OTLP; with SHA-256 it is a 2^-64 event, but cheap to rule out.
  if (std::all_of(id.begin(), id.end(), [](std::uint8_t byte) { return byte == 0; })) id.back() = 1;
  return id;
}

}  // namespace

std::string ApplicationKey(std::string_view app_id, const std::optional<std::string>& attempt_id) {
  std::string key(app_id);
  if (attempt_id && !attempt_id->empty()) key += "/" + *attempt_id;
  return key;
}

tracing::TraceId ApplicationTraceId(std::string_view application_key) {
  tracing::Sha256 hash;
  hash.Update("sparktrace.application.v1");
  hash.Update(kSeparator);
  hash.Update(application_key);
  return LeadingBytes<tracing::TraceId>(hash.Finish());
}

tracing::SpanId DerivedSpanId(std::string_view application_key, const tracing::SpanId& parent,
                              std::string_view what) {
  tracing::Sha256 hash;
  hash.Update("sparktrace.span.v1");
  hash.Update(kSeparator);
  hash.Update(application_key);
  hash.Update(kSeparator);
  hash.Update(std::span<const std::uint8_t>(parent.data(), parent.size()));
  hash.Update(kSeparator);
  hash.Update(what);
  return LeadingBytes<tracing::SpanId>(hash.Finish());
}

}  // namespace sparktrace::listener::correlate
