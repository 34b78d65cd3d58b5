#include "tracing/otlp/proto_writer.h"

#include <cstring>

namespace sparktrace::tracing::otlp {
namespace {

// Wire types from the protobuf encoding spec.
constexpr std::uint32_t kWireVarint = 0;
constexpr std::uint32_t kWireFixed64 = 1;
constexpr std::uint32_t kWireLengthDelimited = 2;

}  // namespace

void ProtoWriter::RawVarint(std::uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::Tag(std::uint32_t field, std::uint32_t wire_type) {
  RawVarint((static_cast<std::uint64_t>(field) << 3) | wire_type);
}

void ProtoWriter::Varint(std::uint32_t field, std::uint64_t value) {
  Tag(field, kWireVarint);
  RawVarint(value);
}

void ProtoWriter::Fixed64(std::uint32_t field, std::uint64_t value) {
  Tag(field, kWireFixed64);
  // Little-endian regardless of the host, as the wire format requires.
  for (int i = 0; i < 8; ++i) out_.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

void ProtoWriter::Double(std::uint32_t field, double value) {
  static_assert(sizeof(double) == sizeof(std::uint64_t));
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(bits));
  Fixed64(field, bits);
}

void ProtoWriter::Bytes(std::uint32_t field, std::string_view bytes) {
  Tag(field, kWireLengthDelimited);
  RawVarint(bytes.size());
  out_.append(bytes);
}

}  // namespace sparktrace::tracing::otlp
