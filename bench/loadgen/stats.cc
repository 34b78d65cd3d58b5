#include "stats.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace sparktrace::loadgen {
namespace {

// Nearest-rank percentile of sorted samples.
double Rank(const std::vector<float>& sorted, double p) {
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += c;
    }
  }
  return out;
}

}  // namespace

LatencySummary Summarize(std::vector<float>& samples) {
  LatencySummary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.p50_us = Rank(samples, 50);
  s.p90_us = Rank(samples, 90);
  s.p99_us = Rank(samples, 99);
  s.max_us = samples.back();
  s.mean_us = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  return s;
}

void JsonLine::Key(const std::string& key) {
  if (!body_.empty()) body_ += ',';
  // Appended piece by piece: `"\"" + std::string` trips GCC 12's -Wrestrict false positive at -O3.
  body_ += '"';
  body_ += Escape(key);
  body_ += "\":";
}

JsonLine& JsonLine::Add(const std::string& key, const std::string& value) {
  Key(key);
  body_ += '"';
  body_ += Escape(value);
  body_ += '"';
  return *this;
}

JsonLine& JsonLine::Add(const std::string& key, const char* value) { return Add(key, std::string(value)); }

JsonLine& JsonLine::Add(const std::string& key, double value) {
  Key(key);
  body_ += std::isfinite(value) ? fmt::format("{:.6g}", value) : "null";
  return *this;
}

JsonLine& JsonLine::Add(const std::string& key, std::int64_t value) {
  Key(key);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Add(const std::string& key, bool value) {
  Key(key);
  body_ += value ? "true" : "false";
  return *this;
}

void JsonLine::Print() const {
  std::string line = Str() + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

}  // namespace sparktrace::loadgen
