#pragma once
// Rate-limits a repeated log line: the first occurrence is logged, then at most one per
// `interval`, saying how many were held back in between. For conditions that repeat as fast as
// the traffic does (an unreachable upstream, accept() failing), where one line per event would
// flood the log and cost what the log is meant to explain.
//
// Threads: one owner (e.g. one relay worker); not synchronised.

#include <chrono>
#include <cstdint>
#include <optional>

namespace sparktrace {

class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogThrottle(Clock::duration interval) : interval_(interval) {}

  // Whether to log this occurrence now; if so, how many occurrences were held back since the
  // last one logged (0 the first time).
  std::optional<std::uint64_t> Allow(Clock::time_point now = Clock::now()) {
    if (logged_once_ && now - last_logged_ < interval_) {
      ++held_back_;
      return std::nullopt;
    }
    logged_once_ = true;
    last_logged_ = now;
    const std::uint64_t held_back = held_back_;
    held_back_ = 0;
    return held_back;
  }

  // The condition is over: the next occurrence is logged at once.
  void Reset() {
    logged_once_ = false;
    held_back_ = 0;
  }

 private:
  const Clock::duration interval_;
  Clock::time_point last_logged_{};
  std::uint64_t held_back_ = 0;
  bool logged_once_ = false;
};

}  // namespace sparktrace
