#pragma once
// Encodes spans as an OTLP ExportTraceServiceRequest in protobuf wire format: one ResourceSpans
// (our resource attributes) holding one ScopeSpans (scope "sparktrace") with every span. The
// same bytes go out over OTLP/gRPC and OTLP/HTTP.
//
// Immutable after construction; Encode() may be called from any thread.

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::tracing::otlp {

// InstrumentationScope.name of every span we export.
inline constexpr std::string_view kOtlpScopeName = "sparktrace";

class OtlpEncoder {
 public:
  // `scope_version` is InstrumentationScope.version (our release); empty leaves it out.
  OtlpEncoder(std::vector<Attribute> resource_attributes, std::string_view scope_version);

  // A serialized opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest.
  std::string Encode(std::span<const Span> spans) const;

  const std::vector<Attribute>& resource_attributes() const { return resource_attributes_; }

 private:
  std::vector<Attribute> resource_attributes_;
  // Resource and InstrumentationScope bodies never change, so they are encoded once.
  std::string encoded_resource_;
  std::string encoded_scope_;
};

}  // namespace sparktrace::tracing::otlp
