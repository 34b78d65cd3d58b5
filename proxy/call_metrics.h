#pragma once
// Prometheus metrics of the forwarded calls. Labels are bounded: method (at most
// kMaxMethodLabels distinct paths, then "other"), status code and direction — never a session,
// operation or user.

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

class CallMetrics final : public CallObserver {
 public:
  static constexpr std::size_t kMaxMethodLabels = 64;

  // Registers the metric families in `registry`, which must outlive this object.
  explicit CallMetrics(prometheus::Registry& registry);

  std::unique_ptr<CallTap> OnCallStarted(const CallStart& start) override;

  // Thread-safe.
  void RecordUpstreamConnectFailure() { upstream_connect_failures_.Increment(); }
  std::int64_t active_calls() const { return active_calls_count_.load(std::memory_order_relaxed); }

  // Per-method series, created on first use and never removed.
  struct MethodSeries {
    std::string label;
    prometheus::Counter& messages_in;
    prometheus::Counter& messages_out;
    prometheus::Counter& bytes_in;
    prometheus::Counter& bytes_out;
    prometheus::Counter& undecodable_in;
    prometheus::Counter& undecodable_out;
    prometheus::Histogram& duration;
    prometheus::Histogram& time_to_first_response;
    // sparktrace_rpc_calls_total{method, code}, one per status code, filled on first use: the
    // family's Add takes a lock and hashes the labels, which every worker would otherwise do at
    // every call's end.
    std::array<std::atomic<prometheus::Counter*>, 17> calls_by_code{};
  };

 private:
  class Tap;

  MethodSeries& SeriesFor(std::string_view method);
  prometheus::Counter& CallsCounter(MethodSeries& series, StatusCode code);

  prometheus::Family<prometheus::Counter>& calls_;
  prometheus::Family<prometheus::Counter>& messages_;
  prometheus::Family<prometheus::Counter>& bytes_;
  prometheus::Family<prometheus::Counter>& undecodable_;
  prometheus::Family<prometheus::Histogram>& duration_;
  prometheus::Family<prometheus::Histogram>& time_to_first_response_;
  prometheus::Gauge& active_calls_;
  prometheus::Counter& upstream_connect_failures_;
  std::atomic<std::int64_t> active_calls_count_{0};

  std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<MethodSeries>, std::less<>> series_;
};

}  // namespace sparktrace::proxy
