#pragma once
// Span timestamps are Unix nanoseconds, but the proxy times calls with the steady clock (immune
// to clock steps mid-call). One anchor pair taken at start-up maps one onto the other, so every
// span of the process agrees on durations and order.

#include <chrono>
#include <cstdint>

namespace sparktrace::tracing::connect {

class WallClock {
 public:
  WallClock()
      : system_anchor_(std::chrono::system_clock::now()), steady_anchor_(std::chrono::steady_clock::now()) {}

  std::uint64_t UnixNanos(std::chrono::steady_clock::time_point at) const {
    const auto since_epoch = system_anchor_.time_since_epoch() + (at - steady_anchor_);
    const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch).count();
    return nanos < 0 ? 0 : static_cast<std::uint64_t>(nanos);
  }

 private:
  std::chrono::system_clock::time_point system_anchor_;
  std::chrono::steady_clock::time_point steady_anchor_;
};

}  // namespace sparktrace::tracing::connect
