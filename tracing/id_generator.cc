#include "tracing/id_generator.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <random>

namespace sparktrace::tracing {
namespace {

std::mt19937_64& ThreadEngine() {
  // A full 256 bits of seed: with a single 32-bit seed, two threads (or two proxy replicas) would
  // draw from only 2^32 streams and could repeat ids.
  thread_local std::mt19937_64 engine = [] {
    std::random_device device;
    std::array<std::uint32_t, 8> seed_words{};
    for (auto& word : seed_words) word = device();
    std::seed_seq seed(seed_words.begin(), seed_words.end());
    return std::mt19937_64(seed);
  }();
  return engine;
}

template <std::size_t N>
void FillRandomNonZero(std::array<std::uint8_t, N>& bytes) {
  std::mt19937_64& engine = ThreadEngine();
  // All zeros means "invalid" in W3C Trace Context; redraw in that (astronomically rare) case.
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      const std::uint64_t word = engine();
      for (std::size_t b = 0; b < 8 && i + b < N; ++b)
        bytes[i + b] = static_cast<std::uint8_t>(word >> (8 * b));
    }
  } while (!IsValid(bytes));
}

}  // namespace

TraceId RandomIdGenerator::NewTraceId() {
  TraceId id;
  FillRandomNonZero(id);
  const auto ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                 std::chrono::system_clock::now().time_since_epoch())
                                                 .count());
  // The next value after the last one made, or this millisecond's first when the clock moved past it;
  // a clock that steps back keeps counting from where it was (ids stay ordered and unique).
  std::uint64_t last = last_time_and_sequence_.load(std::memory_order_relaxed);
  std::uint64_t next = 0;
  do {
    next = std::max(last + 1, ms << 16);
  } while (!last_time_and_sequence_.compare_exchange_weak(last, next, std::memory_order_relaxed));
  for (std::size_t b = 0; b < 8; ++b) id[b] = static_cast<std::uint8_t>(next >> (8 * (7 - b)));
  return id;
}

SpanId RandomIdGenerator::NewSpanId() {
  SpanId id;
  FillRandomNonZero(id);
  return id;
}

}  // namespace sparktrace::tracing
