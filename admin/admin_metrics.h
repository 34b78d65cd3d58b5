#pragma once
// What the admin server counts when one of its limits bites (docs/admin-limits.md), in the registry
// /metrics shows: sparktrace_admin_requests_refused_total{reason} (every reason present from the
// start, at 0), sparktrace_admin_connections (open now, the probe connections among them),
// sparktrace_admin_probe_connections (open now past the caps, for the probes alone),
// sparktrace_admin_ui_requests (trace-view requests waiting for or running on the UI thread) and
// sparktrace_admin_accept_pauses_total.
// Thread-safe (prometheus-cpp's metrics are).

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <array>

#include "admin/refuse_reason.h"

namespace sparktrace::admin {

class AdminMetrics {
 public:
  // Registers the families in `registry`, which must outlive this object.
  explicit AdminMetrics(prometheus::Registry& registry);

  void Refused(RefuseReason reason) { refused_[static_cast<std::size_t>(reason)]->Increment(); }
  void ConnectionOpened(bool probe_only) {
    connections_->Increment();
    if (probe_only) probe_connections_->Increment();
  }
  void ConnectionClosed(bool probe_only) {
    connections_->Decrement();
    if (probe_only) probe_connections_->Decrement();
  }
  void AcceptPaused() { accept_pauses_->Increment(); }
  // A trace-view request was queued for the UI worker (+1), or its answer left it (-1).
  void UiRequests(double delta) { ui_requests_->Increment(delta); }

 private:
  std::array<prometheus::Counter*, kRefuseReasonCount> refused_{};
  prometheus::Gauge* connections_ = nullptr;
  prometheus::Gauge* probe_connections_ = nullptr;
  prometheus::Counter* accept_pauses_ = nullptr;
  prometheus::Gauge* ui_requests_ = nullptr;
};

// sparktrace_libevent_log_suppressed_total (admin/libevent_log.h), read when /metrics is scraped.
prometheus::MetricFamily LibeventLogFamily();

}  // namespace sparktrace::admin
