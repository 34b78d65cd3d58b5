#pragma once
// libevent writes its own warnings ("Error from accept() call: Too many open files") straight to
// stderr: outside --log-format json, and as often as the condition repeats (millions of lines from a
// listener spinning on EMFILE). This sends them through spdlog instead, at most kLibeventLogBurst
// lines per second; the rest are counted and the next line that passes says how many were dropped.

#include <cstdint>

namespace sparktrace::admin {

inline constexpr int kLibeventLogBurst = 10;

// Installs the callback for the whole process (every event loop, the relay's too). Idempotent; any
// thread. The lines use spdlog's default logger as it is when they are written.
void RouteLibeventLogToSpdlog();

// Lines dropped by the rate limit since the process started (sparktrace_libevent_log_suppressed_total).
std::uint64_t SuppressedLibeventLogLines();

}  // namespace sparktrace::admin
