#pragma once
// Protocol Buffers wire-format writer: just the four encodings OTLP uses (varint, fixed64,
// double, length-delimited). Hand-written so the tracing library needs no protoc step and no
// OTLP .proto files; field numbers live with the messages that use them (encoder.cc).
// A plain value: one writer per message, not shared between threads.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace sparktrace::tracing::otlp {

class ProtoWriter {
 public:
  // Tag and value; callers skip proto3 defaults themselves where the field has no presence.
  void Varint(std::uint32_t field, std::uint64_t value);
  void Fixed64(std::uint32_t field, std::uint64_t value);
  void Double(std::uint32_t field, double value);
  void Bool(std::uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  // int64 is encoded as its two's complement varint (10 bytes when negative), as protobuf does.
  void Int64(std::uint32_t field, std::int64_t value) { Varint(field, static_cast<std::uint64_t>(value)); }
  void Bytes(std::uint32_t field, std::string_view bytes);

  // A nested message: `write_body(ProtoWriter&)` fills it, then it is appended length-prefixed.
  // Always written, even when empty, because message fields have presence.
  template <typename WriteBody>
  void Message(std::uint32_t field, WriteBody&& write_body) {
    ProtoWriter body;
    std::forward<WriteBody>(write_body)(body);
    Bytes(field, body.out_);
  }

  const std::string& bytes() const { return out_; }
  std::string Release() { return std::move(out_); }

 private:
  void Tag(std::uint32_t field, std::uint32_t wire_type);
  void RawVarint(std::uint64_t value);

  std::string out_;
};

}  // namespace sparktrace::tracing::otlp
