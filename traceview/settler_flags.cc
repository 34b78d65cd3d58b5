#include "traceview/settler_flags.h"

#include <chrono>

#include "common/flag_values.h"
#include "traceview/span_bound.h"

namespace sparktrace::traceview {

std::vector<FlagSpec> SettleFlagSpecs(bool ui) {
  return {
      ui ? FlagSpec{"settle-interval", "DURATION", "0",
                    "settle ended attempts (their cost in the task list, the sparktrace_task_* counters) "
                    "every "
                    "DURATION; 0: off, the proxies writing the store settle it. Needs a store this process "
                    "may "
                    "write: a read-only file or PostgreSQL role is not settled"}
         : FlagSpec{"settle-interval", "DURATION", "30s",
                    "settle ended attempts every DURATION: their cost in the task list and the "
                    "sparktrace_task_* "
                    "counters (0: off)"},
      {"settle-quiet", "DURATION", "2m",
       "an ended attempt is settled once no span of it arrived for DURATION"},
      {"settle-max-per-pass", "N", "100", "attempts settled per pass at most; the rest wait for the next"},
      {"task-metric-series", "N", "1000",
       "(dag, task) label pairs of the sparktrace_task_* counters; more go to dag=\"(other)\""},
  };
}

Result<SettleConfig> SettleConfigFromFlags(const ParsedFlags& flags,
                                           const diagnose::cost::CostPrices& prices) {
  SettleConfig config;
  auto interval =
      DurationFlag(flags, "settle-interval", std::chrono::milliseconds(0), std::chrono::hours(24));
  if (!interval.ok()) return interval.error();
  auto quiet = DurationFlag(flags, "settle-quiet", std::chrono::milliseconds(0), std::chrono::hours(24 * 7));
  if (!quiet.ok()) return quiet.error();
  auto per_pass = IntegerFlag(flags, "settle-max-per-pass", 1, 100000);
  if (!per_pass.ok()) return per_pass.error();
  auto series = IntegerFlag(flags, "task-metric-series", 1, 1000000);
  if (!series.ok()) return series.error();
  config.options.interval = *interval;
  config.options.quiet = *quiet;
  config.options.max_per_pass = static_cast<std::size_t>(*per_pass);
  config.options.prices = prices;
  config.max_task_series = static_cast<std::size_t>(*series);
  return config;
}

std::vector<FlagSpec> ViewFlagSpecs() {
  return {{"view-max-spans", "N", std::to_string(kDefaultViewMaxSpans),
           "an attempt's page lists at most N spans and summarises the rest per lane and name (0: all)"},
          {"view-cache-bytes", "BYTES", "64MiB",
           "keep the attempt answers built last, up to BYTES, for the next load of an unchanged attempt "
           "(0: none)"}};
}

Result<ViewConfig> ViewConfigFromFlags(const ParsedFlags& flags) {
  auto max_spans = IntegerFlag(flags, "view-max-spans", 0, 10'000'000);
  if (!max_spans.ok()) return max_spans.error();
  auto cache_bytes = ByteSizeFlag(flags, "view-cache-bytes", 0, std::uint64_t{16} << 30);
  if (!cache_bytes.ok()) return cache_bytes.error();
  return ViewConfig{static_cast<std::size_t>(*max_spans), static_cast<std::size_t>(*cache_bytes)};
}

}  // namespace sparktrace::traceview
