#pragma once
// Protocol Buffers wire-format reader for the few small messages a collector sends back
// (ExportTraceServiceResponse, google.rpc.Status and its RetryInfo). Skips unknown fields, as
// protobuf does, so newer collectors stay readable. Views into the caller's buffer: the data
// must outlive the reader and the fields it returns. Not shared between threads.

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"

namespace sparktrace::tracing::otlp {

enum class WireType : std::uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

struct ProtoField {
  std::uint32_t number = 0;
  WireType type = WireType::kVarint;
  std::uint64_t number_value = 0;  // varint, fixed64 and fixed32 payloads
  std::string_view bytes;          // length-delimited payload
};

class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  // The next field, std::nullopt at the clean end of the data, or an error for malformed input
  // (truncated varint or payload, group wire types, field number 0).
  Result<std::optional<ProtoField>> Next();

 private:
  Result<std::uint64_t> RawVarint();

  std::string_view data_;
  std::size_t position_ = 0;
};

}  // namespace sparktrace::tracing::otlp
