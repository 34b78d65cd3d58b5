// Latency percentiles and the one-line JSON result the client prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparktrace::loadgen {

struct LatencySummary {
  std::size_t count = 0;
  double p50_us = 0, p90_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
};

// Summarises latencies in microseconds; sorts `samples` in place.
LatencySummary Summarize(std::vector<float>& samples);

// Builds a flat JSON object, keys in insertion order.
class JsonLine {
 public:
  JsonLine& Add(const std::string& key, const std::string& value);
  JsonLine& Add(const std::string& key, const char* value);
  JsonLine& Add(const std::string& key, double value);
  JsonLine& Add(const std::string& key, std::int64_t value);
  JsonLine& Add(const std::string& key, int value) { return Add(key, static_cast<std::int64_t>(value)); }
  JsonLine& Add(const std::string& key, bool value);
  std::string Str() const { return "{" + body_ + "}"; }

  // Writes the line to stdout, newline-terminated, and flushes.
  void Print() const;

 private:
  void Key(const std::string& key);
  std::string body_;
};

}  // namespace sparktrace::loadgen
