#include "tracing/store/spool/span_codec.h"

#include <spdlog/fmt/fmt.h>

#include <array>
#include <bit>
#include <cstddef>
#include <exception>
#include <new>
#include <type_traits>
#include <utility>
#include <variant>

namespace sparktrace::tracing::store {
namespace {

// Attribute value tags: fixed numbers rather than AttributeValue's variant index, so that reordering
// the variant cannot silently change what spool files already on disk mean.
constexpr std::uint8_t kTagString = 1;
constexpr std::uint8_t kTagInt = 2;
constexpr std::uint8_t kTagDouble = 3;
constexpr std::uint8_t kTagBool = 4;
constexpr std::uint8_t kTagStringArray = 5;

// The fewest bytes one element can take. A count is believed only if that many elements could fit in
// the bytes that remain, so a forged count cannot make us reserve more than a small multiple of the
// input (sizeof(element) / its minimum size).
constexpr std::size_t kMinStringBytes = 1;             // the length of an empty one
constexpr std::size_t kMinAttributeBytes = 1 + 1 + 1;  // empty key, tag, 1-byte value
constexpr std::size_t kMinEventBytes = 1 + 8 + 1;      // empty name, time, no attributes
constexpr std::size_t kMinSpanBytes = 16 + 8 + 8 + 1 + 1 + 1 + 8 + 8 + 1 + 1 + 1 + 1;

constexpr std::uint8_t kMaxSpanKind = static_cast<std::uint8_t>(SpanKind::kConsumer);
constexpr std::uint8_t kMaxStatusCode = static_cast<std::uint8_t>(StatusCode::kError);

// A u64 takes at most 10 LEB128 bytes, the last carrying a single bit.
constexpr int kMaxVarintBytes = 10;

// Small negative numbers stay small: -1 is 1, 1 is 2.
std::uint64_t ZigZag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t UnZigZag(std::uint64_t value) {
  return static_cast<std::int64_t>((value >> 1) ^ (~(value & 1) + 1));
}

class Writer {
 public:
  void Byte(std::uint8_t value) { out_.push_back(static_cast<char>(value)); }

  void Varint(std::uint64_t value) {
    while (value >= 0x80) {
      Byte(static_cast<std::uint8_t>(value | 0x80));
      value >>= 7;
    }
    Byte(static_cast<std::uint8_t>(value));
  }

  void Fixed64(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) Byte(static_cast<std::uint8_t>(value >> (8 * i)));
  }

  template <std::size_t N>
  void Id(const std::array<std::uint8_t, N>& id) {
    for (const std::uint8_t byte : id) Byte(byte);
  }

  void String(std::string_view text) {
    Varint(text.size());
    out_.append(text);
  }

  std::string Take() && { return std::move(out_); }

 private:
  std::string out_;
};

void PutValue(Writer& writer, const AttributeValue& value) {
  std::visit(
      [&writer](const auto& held) {
        using T = std::decay_t<decltype(held)>;
        if constexpr (std::is_same_v<T, std::string>) {
          writer.Byte(kTagString);
          writer.String(held);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          writer.Byte(kTagInt);
          writer.Varint(ZigZag(held));
        } else if constexpr (std::is_same_v<T, double>) {
          writer.Byte(kTagDouble);
          writer.Fixed64(std::bit_cast<std::uint64_t>(held));
        } else if constexpr (std::is_same_v<T, bool>) {
          writer.Byte(kTagBool);
          writer.Byte(held ? 1 : 0);
        } else {
          // A new AttributeValue kind stops the build here: it needs a tag and a new version.
          static_assert(std::is_same_v<T, std::vector<std::string>>);
          writer.Byte(kTagStringArray);
          writer.Varint(held.size());
          for (const std::string& element : held) writer.String(element);
        }
      },
      value);
}

void PutAttributes(Writer& writer, const std::vector<Attribute>& attributes) {
  writer.Varint(attributes.size());
  for (const Attribute& attribute : attributes) {
    writer.String(attribute.key);
    PutValue(writer, attribute.value);
  }
}

void PutSpan(Writer& writer, const Span& span) {
  writer.Id(span.trace_id);
  writer.Id(span.span_id);
  writer.Id(span.parent_span_id);
  writer.String(span.trace_state);
  writer.String(span.name);
  writer.Byte(static_cast<std::uint8_t>(span.kind));
  writer.Fixed64(span.start_time_unix_nano);
  writer.Fixed64(span.end_time_unix_nano);
  PutAttributes(writer, span.attributes);
  writer.Varint(span.events.size());
  for (const SpanEvent& event : span.events) {
    writer.String(event.name);
    writer.Fixed64(event.time_unix_nano);
    PutAttributes(writer, event.attributes);
  }
  writer.Byte(static_cast<std::uint8_t>(span.status_code));
  writer.String(span.status_message);
}

// Reads from untrusted bytes. Every read checks what remains first and returns false on failure,
// keeping what went wrong and where; callers stop at the first false and pass it upward.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  std::size_t remaining() const { return bytes_.size() - at_; }

  bool Fail(std::string what) {
    if (!failed_) {
      failed_ = true;
      what_ = std::move(what);
      failed_at_ = at_;
    }
    return false;
  }

  Error ToError() const {
    return InvalidArgument(fmt::format("span batch: {} at byte {} of {}", what_, failed_at_, bytes_.size()));
  }

  bool Byte(std::uint8_t& out) {
    if (remaining() < 1) return Fail("truncated");
    out = static_cast<std::uint8_t>(bytes_[at_++]);
    return true;
  }

  bool Varint(std::uint64_t& out) {
    std::uint64_t value = 0;
    for (int i = 0; i < kMaxVarintBytes; ++i) {
      std::uint8_t byte = 0;
      if (!Byte(byte)) return false;
      if (i == kMaxVarintBytes - 1 && byte > 1) return Fail("varint overflows 64 bits");
      value |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        out = value;
        return true;
      }
    }
    return Fail("varint longer than 10 bytes");
  }

  bool Fixed64(std::uint64_t& out) {
    if (remaining() < 8) return Fail("truncated");
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) {
      value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes_[at_ + i])) << (8 * i);
    }
    at_ += 8;
    out = value;
    return true;
  }

  template <std::size_t N>
  bool Id(std::array<std::uint8_t, N>& out) {
    if (remaining() < N) return Fail("truncated");
    for (std::uint8_t& byte : out) byte = static_cast<std::uint8_t>(bytes_[at_++]);
    return true;
  }

  bool String(std::string& out) {
    std::uint64_t size = 0;
    if (!Varint(size)) return false;
    if (size > remaining()) return Fail(fmt::format("string of {} bytes with {} left", size, remaining()));
    out.assign(bytes_.substr(at_, size));
    at_ += size;
    return true;
  }

  // A count of elements of at least `min_element_bytes` each, believed only if they could fit.
  bool Count(std::size_t min_element_bytes, std::size_t& out) {
    std::uint64_t count = 0;
    if (!Varint(count)) return false;
    if (count > remaining() / min_element_bytes) {
      return Fail(fmt::format("count {} cannot fit in the {} bytes left", count, remaining()));
    }
    out = static_cast<std::size_t>(count);
    return true;
  }

 private:
  std::string_view bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
  std::string what_;
  std::size_t failed_at_ = 0;
};

bool ReadValue(Reader& reader, AttributeValue& out) {
  std::uint8_t tag = 0;
  if (!reader.Byte(tag)) return false;
  switch (tag) {
    case kTagString: {
      std::string text;
      if (!reader.String(text)) return false;
      out = std::move(text);
      return true;
    }
    case kTagInt: {
      std::uint64_t zigzag = 0;
      if (!reader.Varint(zigzag)) return false;
      out = UnZigZag(zigzag);
      return true;
    }
    case kTagDouble: {
      std::uint64_t bits = 0;
      if (!reader.Fixed64(bits)) return false;
      out = std::bit_cast<double>(bits);
      return true;
    }
    case kTagBool: {
      std::uint8_t flag = 0;
      if (!reader.Byte(flag)) return false;
      if (flag > 1) return reader.Fail(fmt::format("bool value {}", flag));
      out = flag == 1;
      return true;
    }
    case kTagStringArray: {
      std::size_t count = 0;
      if (!reader.Count(kMinStringBytes, count)) return false;
      std::vector<std::string> elements(count);
      for (std::string& element : elements) {
        if (!reader.String(element)) return false;
      }
      out = std::move(elements);
      return true;
    }
    default:
      return reader.Fail(fmt::format("unknown attribute value tag {}", tag));
  }
}

bool ReadAttributes(Reader& reader, std::vector<Attribute>& out) {
  std::size_t count = 0;
  if (!reader.Count(kMinAttributeBytes, count)) return false;
  out.resize(count);
  for (Attribute& attribute : out) {
    if (!reader.String(attribute.key) || !ReadValue(reader, attribute.value)) return false;
  }
  return true;
}

bool ReadEvents(Reader& reader, std::vector<SpanEvent>& out) {
  std::size_t count = 0;
  if (!reader.Count(kMinEventBytes, count)) return false;
  out.resize(count);
  for (SpanEvent& event : out) {
    if (!reader.String(event.name) || !reader.Fixed64(event.time_unix_nano) ||
        !ReadAttributes(reader, event.attributes)) {
      return false;
    }
  }
  return true;
}

bool ReadSpan(Reader& reader, Span& span) {
  std::uint8_t kind = 0;
  if (!reader.Id(span.trace_id) || !reader.Id(span.span_id) || !reader.Id(span.parent_span_id) ||
      !reader.String(span.trace_state) || !reader.String(span.name) || !reader.Byte(kind)) {
    return false;
  }
  if (kind > kMaxSpanKind) return reader.Fail(fmt::format("span kind {}", kind));
  span.kind = static_cast<SpanKind>(kind);
  std::uint8_t status = 0;
  if (!reader.Fixed64(span.start_time_unix_nano) || !reader.Fixed64(span.end_time_unix_nano) ||
      !ReadAttributes(reader, span.attributes) || !ReadEvents(reader, span.events) || !reader.Byte(status)) {
    return false;
  }
  if (status > kMaxStatusCode) return reader.Fail(fmt::format("status code {}", status));
  span.status_code = static_cast<StatusCode>(status);
  return reader.String(span.status_message);
}

Result<std::vector<Span>> DecodeBatch(std::string_view bytes) {
  Reader reader(bytes);
  std::uint8_t version = 0;
  if (!reader.Byte(version)) return reader.ToError();
  if (version != kSpanCodecVersion) {
    reader.Fail(fmt::format("unsupported version {} (this build reads {})", version, kSpanCodecVersion));
    return reader.ToError();
  }
  std::size_t count = 0;
  if (!reader.Count(kMinSpanBytes, count)) return reader.ToError();
  std::vector<Span> spans(count);
  for (Span& span : spans) {
    if (!ReadSpan(reader, span)) return reader.ToError();
  }
  if (reader.remaining() != 0) {
    reader.Fail(fmt::format("{} bytes after the last span", reader.remaining()));
    return reader.ToError();
  }
  return spans;
}

}  // namespace

std::string EncodeSpans(std::span<const Span> spans) {
  Writer writer;
  writer.Byte(kSpanCodecVersion);
  writer.Varint(spans.size());
  for (const Span& span : spans) PutSpan(writer, span);
  return std::move(writer).Take();
}

Result<std::vector<Span>> DecodeSpans(std::string_view bytes) {
  // Allocations are bounded by the input's size (see Reader::Count), but the caller's memory may be
  // short all the same; that must not escape as an exception.
  try {
    return DecodeBatch(bytes);
  } catch (const std::bad_alloc&) {
    return Error{ErrorCode::kInternal,
                 fmt::format("span batch: out of memory decoding {} bytes", bytes.size())};
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInternal, fmt::format("span batch: {}", e.what())};
  }
}

}  // namespace sparktrace::tracing::store
