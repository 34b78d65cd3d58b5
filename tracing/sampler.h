#pragma once
// Which traces are recorded. Parent-based: a client that sent a traceparent already decided (its
// sampled flag). Traces that start at the proxy (derived from an Airflow task attempt, or new) are
// sampled by ratio, deterministically from the trace id as OpenTelemetry's TraceIdRatioBased does,
// so every operation of one derived Airflow trace gets the same decision — on every replica.

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing {

// Parses the --sample-ratio flag: a decimal number in [0, 1] ("0", "0.25", "1", "1e-3").
Result<double> ParseSampleRatio(std::string_view text);

// Threads: immutable after Create(); share one instance and call it from any thread.
class Sampler {
 public:
  // Errors for a ratio outside [0, 1] (and NaN).
  static Result<Sampler> Create(double ratio);

  // For a trace that starts here: the trace id's last 8 bytes, read as a big-endian number, are
  // sampled when below ratio × 2^64. Ratio 0 samples nothing, ratio 1 everything.
  bool ShouldSampleRoot(const TraceId& trace_id) const;

  // The decision for a request: the parent's flag when there is a parent (`parent_sampled` set,
  // i.e. a valid client traceparent), otherwise ShouldSampleRoot().
  bool ShouldSample(const TraceId& trace_id, std::optional<bool> parent_sampled) const;

  double ratio() const { return ratio_; }

 private:
  Sampler(double ratio, std::uint64_t threshold, bool sample_all)
      : ratio_(ratio), threshold_(threshold), sample_all_(sample_all) {}

  double ratio_;
  std::uint64_t threshold_;  // sample when the id's value is < threshold_; ratio × 2^64
  bool sample_all_;          // ratio 1: 2^64 does not fit in threshold_
};

}  // namespace sparktrace::tracing
