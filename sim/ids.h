#pragma once
// Identifiers the simulator hands out, shaped like Spark's (random UUIDs).

#include <string>

namespace sparktrace::sim {

// A random version-4 UUID in canonical form. Thread-safe.
std::string NewUuid();

}  // namespace sparktrace::sim
