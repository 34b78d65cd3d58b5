#pragma once
// Shared by the receive block tests and the MessageTapper tests: bytes, the size of a receive block,
// and a byte pattern whose every position differs from its neighbours.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "proxy/receive_blocks.h"

namespace sparktrace::proxy {

using Bytes = std::vector<std::uint8_t>;

inline constexpr std::size_t kBlock = ReceiveBlock::kCapacity;

inline Bytes Pattern(std::size_t size, std::uint8_t seed) {
  Bytes out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<std::uint8_t>(seed + i * 31U + (i >> 8U));
  return out;
}

}  // namespace sparktrace::proxy
