#pragma once
// SHA-256 (FIPS 180-4), self-contained so that deriving trace ids needs no crypto library.
// Used for stable ids, not for security: nothing here is constant-time.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sparktrace::tracing {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental hashing: Update() any number of times, then Finish().
// Threads: an object is not synchronised; use one per thread. Holds no resources.
class Sha256 {
 public:
  Sha256();

  void Update(std::string_view data);
  void Update(std::span<const std::uint8_t> data);

  // Returns the digest of everything passed to Update() and resets the object to its initial
  // state, so it can hash the next message.
  Sha256Digest Finish();

  // One-shot convenience.
  static Sha256Digest Hash(std::string_view data);

 private:
  void Reset();
  void Compress(const std::uint8_t* block);

  std::array<std::uint32_t, 8> state_{};
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;       // bytes in buffer_ not yet compressed
  std::uint64_t total_bytes_ = 0;  // message length so far; FIPS 180-4 limits it to 2^64 bits
};

// 64 lower-case hex digits.
std::string ToHex(const Sha256Digest& digest);

}  // namespace sparktrace::tracing
