#pragma once
// Shared by the Spark Connect decoder tests: bytes as a slice, single-slice decodes, the ids the
// tests put into messages, and a protobuf varint written by hand (messages the tests build byte by
// byte, malformed ones included).

#include <cstdint>
#include <string>
#include <string_view>

#include "spark_connect/request_decoder.h"
#include "spark_connect/response_decoder.h"

namespace sparktrace::spark_connect {

inline constexpr char kSession[] = "9d4f6c2e-3b1a-4e5f-8a7b-0c1d2e3f4a5b";
inline constexpr char kOperation[] = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
inline constexpr char kServerSession[] = "5a5a5a5a-0000-4000-8000-123456789abc";

// Protobuf's base-128 varint: 7 bits a byte, least significant first.
inline std::string Varint(std::uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}

// A length-delimited field (wire type 2): its key, the payload's length, the payload.
inline std::string LengthDelimitedField(std::uint32_t number, std::string_view payload) {
  return Varint((std::uint64_t{number} << 3) | 2U) + Varint(payload.size()) + std::string(payload);
}

inline ByteSlice AsSlice(std::string_view bytes) {
  return ByteSlice(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

inline RequestInfo DecodeRequestBytes(Method method, std::string_view bytes) {
  const ByteSlice slice = AsSlice(bytes);
  return DecodeRequest(method, MessageSlices(&slice, 1));
}

inline ResponseInfo DecodeResponseBytes(Method method, std::string_view bytes) {
  const ByteSlice slice = AsSlice(bytes);
  return DecodeResponse(method, MessageSlices(&slice, 1));
}

}  // namespace sparktrace::spark_connect
