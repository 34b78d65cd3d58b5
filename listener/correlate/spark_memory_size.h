#pragma once
// The heap size a Spark memory setting (spark.executor.memory, spark.driver.memory) gives the JVM,
// read as Spark reads it: JavaUtils.byteStringAs(value, ByteUnit.MiB), i.e. an integer with an
// optional unit suffix b, k/kb, m/mb, g/gb, t/tb, p/pb (case-insensitive, binary multiples), no
// suffix meaning MiB ("4096" is 4 GiB, not 4 KB), no fractions ("1.5g" is rejected, as Spark does).
// Spark hands the executor `-Xmx<MiB>m`, so a value that is not a whole number of MiB is floored
// to one ("1536k" gives 1 MiB).
//
// Pure function; thread-safe.

#include <cstdint>
#include <optional>
#include <string_view>

namespace sparktrace::listener::correlate {

// Spark counts memory settings without a unit, and the heap it hands the JVM, in these.
inline constexpr std::int64_t kMiB = std::int64_t{1} << 20;

// The heap in bytes; nullopt when Spark would reject the value (or it overflows).
std::optional<std::int64_t> SparkMemoryBytes(std::string_view value);

}  // namespace sparktrace::listener::correlate
