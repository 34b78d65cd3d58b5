#pragma once
// Metrics and times in an event log are whole numbers; the simulator's figures are drawn as doubles.

#include <cmath>
#include <cstdint>

namespace sparktrace::sim::eventlog {

// The nearest whole number to a simulated figure.
inline std::int64_t Round(double value) { return static_cast<std::int64_t>(std::llround(value)); }

}  // namespace sparktrace::sim::eventlog
