#include "listener/correlate/resource_settings.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "listener/correlate/spark_memory_size.h"

namespace sparktrace::listener::correlate {
namespace {

constexpr std::int64_t kDefaultHeapBytes = 1024 * kMiB;     // spark.{executor,driver}.memory=1g
constexpr std::int64_t kMinimumOverheadBytes = 384 * kMiB;  // Spark's MEMORY_OVERHEAD_MIN
constexpr double kDefaultOverheadFactor = 0.10;

std::optional<double> PositiveNumber(std::optional<std::string_view> text) {
  if (!text) return std::nullopt;
  double number = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), number);
  if (error != std::errc() || end != text->data() + text->size() || !std::isfinite(number) || number <= 0)
    return std::nullopt;
  return number;
}

std::optional<std::int64_t> MemoryProperty(const ApplicationModel& model, std::string_view key) {
  const std::optional<std::string_view> value = model.Property(key);
  return value ? SparkMemoryBytes(*value) : std::nullopt;
}

// Heap and overhead of one role ("spark.executor" or "spark.driver").
std::pair<std::int64_t, std::int64_t> MemoryOf(const ApplicationModel& model, const std::string& role) {
  const std::int64_t heap = MemoryProperty(model, role + ".memory").value_or(kDefaultHeapBytes);
  if (const std::optional<std::int64_t> overhead = MemoryProperty(model, role + ".memoryOverhead"))
    return {heap, *overhead};
  std::optional<double> factor = PositiveNumber(model.Property(role + ".memoryOverheadFactor"));
  if (!factor) factor = PositiveNumber(model.Property("spark.kubernetes.memoryOverheadFactor"));
  const double scale = factor.value_or(kDefaultOverheadFactor);
  const auto scaled = static_cast<std::int64_t>(scale * static_cast<double>(heap));
  return {heap, std::max(kMinimumOverheadBytes, scaled)};
}

}  // namespace

std::optional<ResourceSettings> ResourceSettingsOf(const ApplicationModel& model) {
  if (model.properties().empty()) return std::nullopt;
  ResourceSettings settings;
  std::tie(settings.executor_memory_bytes, settings.executor_memory_overhead_bytes) =
      MemoryOf(model, "spark.executor");
  std::tie(settings.driver_memory_bytes, settings.driver_memory_overhead_bytes) =
      MemoryOf(model, "spark.driver");
  if (const std::optional<std::string_view> cores = model.Property("spark.driver.cores")) {
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(cores->data(), cores->data() + cores->size(), value);
    if (error == std::errc() && end == cores->data() + cores->size() && value > 0)
      settings.driver_cores = value;
  }
  return settings;
}

bool DriverIsExecutor(const ApplicationModel& model) {
  return std::any_of(model.executors().begin(), model.executors().end(),
                     [](const ExecutorRecord& executor) { return executor.executor_id == "driver"; });
}

}  // namespace sparktrace::listener::correlate
