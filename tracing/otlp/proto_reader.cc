#include "tracing/otlp/proto_reader.h"

namespace sparktrace::tracing::otlp {
namespace {

Error Malformed(const char* what) {
  return Error{ErrorCode::kInvalidArgument, std::string("malformed protobuf: ") + what};
}

}  // namespace

Result<std::uint64_t> ProtoReader::RawVarint() {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (position_ >= data_.size()) return Malformed("truncated varint");
    const auto byte = static_cast<std::uint8_t>(data_[position_++]);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return Malformed("varint longer than 10 bytes");
}

Result<std::optional<ProtoField>> ProtoReader::Next() {
  if (position_ >= data_.size()) return std::optional<ProtoField>();
  auto tag = RawVarint();
  if (!tag.ok()) return tag.error();
  ProtoField field;
  if ((*tag >> 3) == 0 || (*tag >> 3) > 0x1fffffff) return Malformed("bad field number");
  field.number = static_cast<std::uint32_t>(*tag >> 3);
  switch (*tag & 7) {
    case 0: {
      field.type = WireType::kVarint;
      auto value = RawVarint();
      if (!value.ok()) return value.error();
      field.number_value = *value;
      break;
    }
    case 1:
    case 5: {
      const std::size_t width = (*tag & 7) == 1 ? 8 : 4;
      field.type = width == 8 ? WireType::kFixed64 : WireType::kFixed32;
      if (data_.size() - position_ < width) return Malformed("truncated fixed-width field");
      for (std::size_t i = 0; i < width; ++i) {
        field.number_value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(data_[position_ + i]))
                              << (8 * i);
      }
      position_ += width;
      break;
    }
    case 2: {
      field.type = WireType::kLengthDelimited;
      auto length = RawVarint();
      if (!length.ok()) return length.error();
      if (*length > data_.size() - position_) return Malformed("truncated length-delimited field");
      field.bytes = data_.substr(position_, static_cast<std::size_t>(*length));
      position_ += static_cast<std::size_t>(*length);
      break;
    }
    default:
      return Malformed("unsupported wire type");
  }
  return std::optional<ProtoField>(field);
}

}  // namespace sparktrace::tracing::otlp
