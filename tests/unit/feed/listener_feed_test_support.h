#pragma once
// Reading prometheus::MetricFamily values in the feed's tests.

#include <prometheus/metric_family.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::feed {

inline const prometheus::MetricFamily* FindFamily(const std::vector<prometheus::MetricFamily>& families,
                                                  const std::string& name) {
  for (const auto& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

// The value of the sample of `family` whose labels include every one of `labels`; NaN when none.
inline double Value(const std::vector<prometheus::MetricFamily>& families, const std::string& name,
                    const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  const prometheus::MetricFamily* family = FindFamily(families, name);
  if (family == nullptr) return std::nan("");
  for (const auto& metric : family->metric) {
    const bool match = std::all_of(labels.begin(), labels.end(), [&](const auto& want) {
      return std::any_of(metric.label.begin(), metric.label.end(), [&](const auto& have) {
        return have.name == want.first && have.value == want.second;
      });
    });
    if (match)
      return family->type == prometheus::MetricType::Counter ? metric.counter.value : metric.gauge.value;
  }
  return std::nan("");
}

}  // namespace sparktrace::feed
