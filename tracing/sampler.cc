#include "tracing/sampler.h"

#include <charconv>
#include <cmath>
#include <string>

namespace sparktrace::tracing {

Result<double> ParseSampleRatio(std::string_view text) {
  double ratio = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, ratio);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument("--sample-ratio: '" + std::string(text) + "' is not a number (e.g. 0.1)");
  }
  if (!(ratio >= 0.0 && ratio <= 1.0)) {  // also rejects nan and inf
    return InvalidArgument("--sample-ratio: " + std::string(text) + " is outside [0, 1]");
  }
  return ratio;
}

Result<Sampler> Sampler::Create(double ratio) {
  if (!(ratio >= 0.0 && ratio <= 1.0)) {  // written so that NaN fails too
    return InvalidArgument("sample ratio " + std::to_string(ratio) + " is outside [0, 1]");
  }
  if (ratio == 1.0) return Sampler(ratio, 0, /*sample_all=*/true);
  // ratio < 1 here, so ratio × 2^64 < 2^64 fits. ldexp scales by a power of two without rounding;
  // the cast only drops a fraction (possible for ratios below 2^-11), which is below one id in 2^64.
  const auto threshold = static_cast<std::uint64_t>(std::ldexp(ratio, 64));
  return Sampler(ratio, threshold, /*sample_all=*/false);
}

bool Sampler::ShouldSampleRoot(const TraceId& trace_id) const {
  if (sample_all_) return true;
  std::uint64_t value = 0;
  for (std::size_t i = trace_id.size() - 8; i < trace_id.size(); ++i) value = (value << 8) | trace_id[i];
  return value < threshold_;
}

bool Sampler::ShouldSample(const TraceId& trace_id, std::optional<bool> parent_sampled) const {
  if (parent_sampled.has_value()) return *parent_sampled;
  return ShouldSampleRoot(trace_id);
}

}  // namespace sparktrace::tracing
