#pragma once
// Exports spans to an OTLP collector over gRPC: one unary
// opentelemetry.proto.collector.trace.v1.TraceService/Export call per Export(), the request
// encoded by OtlpEncoder and sent as raw bytes through the generic stub (no generated code),
// retried per the OTLP spec (see retry_policy.h).
//
// Owns its channel. Threads: see SpanExporter. gRPC types stay in the .cc.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/otlp/headers.h"
#include "tracing/otlp/retry_policy.h"
#include "tracing/span_exporter.h"

namespace sparktrace::tracing::otlp {

struct OtlpGrpcExporterOptions {
  std::string endpoint = "localhost:4317";  // host:port
  bool use_tls = false;
  std::string ca_file;  // PEM roots to trust with TLS; empty means the system's
  OtlpHeaders headers;  // metadata on every call (e.g. from --otlp-header); values are never logged
  std::chrono::milliseconds timeout{10000};  // per attempt
  OtlpRetryOptions retry;
  std::vector<Attribute> resource_attributes;  // see resource_attributes.h
  std::string scope_version;                   // InstrumentationScope.version
};

class OtlpGrpcExporter final : public SpanExporter {
 public:
  // Checks the options (endpoint, headers, CA file) and creates the channel; connects lazily.
  static Result<std::unique_ptr<OtlpGrpcExporter>> Create(OtlpGrpcExporterOptions options);
  ~OtlpGrpcExporter() override;
  OtlpGrpcExporter(const OtlpGrpcExporter&) = delete;
  OtlpGrpcExporter& operator=(const OtlpGrpcExporter&) = delete;

  Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) override;
  // Also cancels the call in flight.
  void Shutdown() override;
  SpanExporterCounters counters() const override;

  // For Create() only: Impl is defined in the .cc, so nothing else can make one.
  struct Impl;
  explicit OtlpGrpcExporter(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparktrace::tracing::otlp
