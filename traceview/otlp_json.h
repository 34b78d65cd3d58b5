#pragma once
// The OTLP/JSON download of an attempt (docs/trace-view-api.md, "Downloads"): its spans as one
// ExportTraceServiceRequest in the protobuf JSON mapping that OTLP/HTTP collectors accept
// (hex ids, 64-bit integers as strings, enum values as numbers, typed AnyValues).
//
// Pure functions; thread-safe.

#include <span>
#include <string>

#include "tracing/span.h"

namespace sparktrace::traceview {

std::string OtlpJson(std::span<const tracing::Span> spans);

}  // namespace sparktrace::traceview
