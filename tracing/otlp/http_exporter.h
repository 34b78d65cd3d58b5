#pragma once
// Exports spans to an OTLP collector over HTTP/1.1: POST of the protobuf-encoded
// ExportTraceServiceRequest (Content-Type application/x-protobuf) to http://host:port/v1/traces,
// retried on 429/502/503/504 honouring Retry-After (see retry_policy.h). Uses libevent's
// evhttp client on the exporter thread, one connection per attempt; plain HTTP only (https://
// endpoints are refused: use the OTLP/gRPC exporter with TLS).
//
// Owns its libevent loop, which only runs inside Export(). Threads: see SpanExporter. libevent
// types stay in the .cc.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tracing/otlp/headers.h"
#include "tracing/otlp/retry_policy.h"
#include "tracing/span_exporter.h"

namespace sparktrace::tracing::otlp {

struct OtlpHttpExporterOptions {
  // "host:port" (path /v1/traces) or "http://host:port[/path]".
  std::string endpoint = "localhost:4318";
  OtlpHeaders headers;                       // added to every request; values are never logged
  std::chrono::milliseconds timeout{10000};  // per attempt: connect, send and receive
  OtlpRetryOptions retry;
  std::vector<Attribute> resource_attributes;  // see resource_attributes.h
  std::string scope_version;                   // InstrumentationScope.version
};

class OtlpHttpExporter final : public SpanExporter {
 public:
  // Checks the options (endpoint, headers); connects on each Export().
  static Result<std::unique_ptr<OtlpHttpExporter>> Create(OtlpHttpExporterOptions options);
  ~OtlpHttpExporter() override;
  OtlpHttpExporter(const OtlpHttpExporter&) = delete;
  OtlpHttpExporter& operator=(const OtlpHttpExporter&) = delete;

  Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) override;
  void Shutdown() override;
  SpanExporterCounters counters() const override;

  // For Create() only: Impl is defined in the .cc, so nothing else can make one.
  struct Impl;
  explicit OtlpHttpExporter(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparktrace::tracing::otlp
