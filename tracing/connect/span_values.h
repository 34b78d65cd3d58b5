#pragma once
// The two conversions both span builders of this folder (call_tracer.cc, operation_span.cc) make:
// an integer attribute appended to a span's list, and a steady-clock duration in milliseconds.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::connect {

inline void AddInt(std::vector<Attribute>& attributes, std::string_view key, std::int64_t value) {
  attributes.push_back({std::string(key), value});
}

inline double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

}  // namespace sparktrace::tracing::connect
