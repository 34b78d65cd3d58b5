#include "admin/libevent_log.h"

#include <event2/event.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <mutex>

namespace sparktrace::admin {
namespace {

std::atomic<std::uint64_t> suppressed_total{0};

// A fixed one-second window: simple, and a flood costs one lock and one counter per line.
class RateLimiter {
 public:
  // How many lines were dropped since the last one that passed, or -1 when this one is dropped too.
  std::int64_t Admit() {
    const auto now = std::chrono::steady_clock::now();
    const std::lock_guard lock(mu_);
    if (now - window_start_ >= std::chrono::seconds(1)) {
      window_start_ = now;
      admitted_ = 0;
    }
    if (admitted_ >= kLibeventLogBurst) {
      ++dropped_since_last_;
      return -1;
    }
    ++admitted_;
    const std::int64_t dropped = dropped_since_last_;
    dropped_since_last_ = 0;
    return dropped;
  }

 private:
  std::mutex mu_;
  std::chrono::steady_clock::time_point window_start_{};
  int admitted_ = 0;
  std::int64_t dropped_since_last_ = 0;
};

RateLimiter& Limiter() {
  static RateLimiter limiter;
  return limiter;
}

spdlog::level::level_enum LevelOf(int severity) {
  switch (severity) {
    case EVENT_LOG_DEBUG: return spdlog::level::debug;
    case EVENT_LOG_MSG: return spdlog::level::info;
    case EVENT_LOG_WARN: return spdlog::level::warn;
    default: return spdlog::level::err;
  }
}

void OnLibeventLog(int severity, const char* message) {
  const std::int64_t dropped = Limiter().Admit();
  if (dropped < 0) {
    suppressed_total.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (dropped > 0) {
    spdlog::log(LevelOf(severity), "libevent: {} ({} earlier libevent lines dropped by the rate limit)", message,
                dropped);
  } else {
    spdlog::log(LevelOf(severity), "libevent: {}", message);
  }
}

}  // namespace

void RouteLibeventLogToSpdlog() {
  static std::once_flag once;
  std::call_once(once, [] { event_set_log_callback(OnLibeventLog); });
}

std::uint64_t SuppressedLibeventLogLines() { return suppressed_total.load(std::memory_order_relaxed); }

}  // namespace sparktrace::admin
