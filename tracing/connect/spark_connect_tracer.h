#pragma once
// Tracing of Spark Connect calls (docs/tracing.md): the CallObserver the proxy runs every call
// past. Per call it resolves the trace (client traceparent, Airflow identity, or new), swaps the
// upstream traceparent for one naming the call's span, and hands the call to a CallTracer; it
// turns ended operations into `spark_connect.operation` spans.
//
// Threads: OnCallStarted runs on any proxy worker; everything it shares is thread-safe.
// Lifetime: must outlive the proxy server's calls; call Shutdown once they have drained.

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proxy/call_observer.h"
#include "tracing/connect/call_tracer.h"
#include "tracing/connect/operation_registry.h"
#include "tracing/connect/tracing_metrics.h"
#include "tracing/connect/wall_clock.h"
#include "tracing/id_generator.h"
#include "tracing/sampler.h"
#include "tracing/span_sink.h"

namespace sparktrace::tracing::connect {

class SparkConnectTracer final : public proxy::CallObserver, private OperationSink {
 public:
  SparkConnectTracer(SpanSink& spans, IdGenerator& ids, Sampler sampler, TracingMetrics& metrics,
                     OperationRegistryOptions operations = {});

  std::unique_ptr<proxy::CallTap> OnCallStarted(const proxy::CallStart& start) override;

  // Ends the operations still open as `unfinished` and submits their spans.
  void Shutdown();

  OperationRegistry& operations() { return operations_; }

  // The span of an open or recently ended operation (OperationRegistry::EndedSpanOf), so that
  // driver events arriving after an operation ended still find their parent. Thread-safe.
  std::optional<OperationSpanInfo> FindOperationSpan(std::string_view operation_id) const;

 private:
  void OnOperationEnded(const Operation& operation) override;

  SpanSink& spans_;
  IdGenerator& ids_;
  const Sampler sampler_;
  TracingMetrics& metrics_;
  const WallClock clock_;
  OperationRegistry operations_;  // after everything OnOperationEnded uses: its sweeper calls it
  const TracerServices services_;
};

}  // namespace sparktrace::tracing::connect
