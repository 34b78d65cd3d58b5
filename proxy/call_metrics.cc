#include "proxy/call_metrics.h"

#include <chrono>
#include <mutex>

#include "proxy/status_names.h"

namespace sparktrace::proxy {
namespace {

// Spark Connect calls range from sub-millisecond Config calls to multi-hour ExecutePlan streams.
prometheus::Histogram::BucketBoundaries DurationBuckets() {
  return {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,
          2.5,    5,     10,     30,    60,   120,   300,  600, 1800, 3600, 7200};
}

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

class CallMetrics::Tap final : public CallTap {
 public:
  Tap(CallMetrics& metrics, MethodSeries& series) : metrics_(metrics), series_(series) {}

  // Counting needs the sizes only: the proxy need not keep a message's buffers for this tap.
  bool NeedsMessageBytes() const override { return false; }

  void OnRequestMessage(const TappedMessage& message) override {
    series_.messages_in.Increment();
    series_.bytes_in.Increment(static_cast<double>(message.wire_bytes));
  }

  void OnResponseMessage(const TappedMessage& message) override {
    series_.messages_out.Increment();
    series_.bytes_out.Increment(static_cast<double>(message.wire_bytes));
  }

  void OnCallEnded(const CallEnd& end) override {
    metrics_.CallsCounter(series_, end.code).Increment();
    series_.duration.Observe(Seconds(end.duration));
    if (end.time_to_first_response) series_.time_to_first_response.Observe(Seconds(*end.time_to_first_response));
    series_.undecodable_in.Increment(static_cast<double>(end.requests.undecodable));
    series_.undecodable_out.Increment(static_cast<double>(end.responses.undecodable));
    metrics_.active_calls_.Decrement();
    metrics_.active_calls_count_.fetch_sub(1, std::memory_order_relaxed);
  }

 private:
  CallMetrics& metrics_;
  MethodSeries& series_;
};

CallMetrics::CallMetrics(prometheus::Registry& registry)
    : calls_(prometheus::BuildCounter()
                 .Name("sparktrace_rpc_calls_total")
                 .Help("Calls forwarded, by method and the gRPC status code the client received")
                 .Register(registry)),
      messages_(prometheus::BuildCounter()
                    .Name("sparktrace_rpc_messages_total")
                    .Help("Messages forwarded; direction in = client to upstream, out = upstream to client")
                    .Register(registry)),
      bytes_(prometheus::BuildCounter()
                 .Name("sparktrace_rpc_bytes_total")
                 .Help("Message payload bytes forwarded; direction in = client to upstream, out = upstream to client")
                 .Register(registry)),
      undecodable_(prometheus::BuildCounter()
                       .Name("sparktrace_rpc_undecodable_messages_total")
                       .Help("Messages compressed with an encoding the proxy cannot decompress (forwarded "
                             "unchanged, unread by tracing); direction as for sparktrace_rpc_messages_total")
                       .Register(registry)),
      duration_(prometheus::BuildHistogram()
                    .Name("sparktrace_rpc_duration_seconds")
                    .Help("Whole-call duration, from the call's arrival to its status being sent")
                    .Register(registry)),
      time_to_first_response_(prometheus::BuildHistogram()
                                  .Name("sparktrace_rpc_time_to_first_response_seconds")
                                  .Help("From the call's arrival to the first response message from upstream")
                                  .Register(registry)),
      active_calls_(prometheus::BuildGauge()
                        .Name("sparktrace_rpc_active_calls")
                        .Help("Calls in flight")
                        .Register(registry)
                        .Add({})),
      upstream_connect_failures_(prometheus::BuildCounter()
                                     .Name("sparktrace_upstream_connect_failures_total")
                                     .Help("Times the upstream connection failed or was lost")
                                     .Register(registry)
                                     .Add({})) {}

std::unique_ptr<CallTap> CallMetrics::OnCallStarted(const CallStart& start) {
  active_calls_.Increment();
  active_calls_count_.fetch_add(1, std::memory_order_relaxed);
  return std::make_unique<Tap>(*this, SeriesFor(start.method));
}

prometheus::Counter& CallMetrics::CallsCounter(MethodSeries& series, StatusCode code) {
  const auto index = static_cast<std::size_t>(code);
  if (index >= series.calls_by_code.size()) {  // not a gRPC code: no cache slot, take the family's path
    return calls_.Add({{"method", series.label}, {"code", std::string(StatusCodeName(code))}});
  }
  std::atomic<prometheus::Counter*>& slot = series.calls_by_code[index];
  if (prometheus::Counter* counter = slot.load(std::memory_order_acquire)) return *counter;
  // Two workers may both get here: Add returns the same counter for the same labels.
  prometheus::Counter& counter = calls_.Add({{"method", series.label}, {"code", std::string(StatusCodeName(code))}});
  slot.store(&counter, std::memory_order_release);
  return counter;
}

CallMetrics::MethodSeries& CallMetrics::SeriesFor(std::string_view method) {
  {
    std::shared_lock lock(mu_);
    if (auto it = series_.find(method); it != series_.end()) return *it->second;
  }
  std::unique_lock lock(mu_);
  if (auto it = series_.find(method); it != series_.end()) return *it->second;
  // Unknown clients could send any number of method paths; the label set must stay bounded.
  const std::string label = series_.size() < kMaxMethodLabels ? std::string(method) : std::string("other");
  if (auto it = series_.find(label); it != series_.end()) return *it->second;
  auto series = std::make_unique<MethodSeries>(
      label,
      messages_.Add({{"method", label}, {"direction", "in"}}),
      messages_.Add({{"method", label}, {"direction", "out"}}),
      bytes_.Add({{"method", label}, {"direction", "in"}}),
      bytes_.Add({{"method", label}, {"direction", "out"}}),
      undecodable_.Add({{"method", label}, {"direction", "in"}}),
      undecodable_.Add({{"method", label}, {"direction", "out"}}),
      duration_.Add({{"method", label}}, DurationBuckets()),
      time_to_first_response_.Add({{"method", label}}, DurationBuckets()));
  auto& stored = *series;
  series_.emplace(label, std::move(series));
  return stored;
}

}  // namespace sparktrace::proxy
