#pragma once
// Where new trace and span ids come from. An interface so that tests (and the simulator) can
// inject predictable ids; production uses RandomIdGenerator.

#include "tracing/span.h"

namespace sparktrace::tracing {

// Threads: implementations must allow concurrent calls from any thread (proxy workers call them
// for every RPC). Ids returned are always valid, i.e. never all zeros.
class IdGenerator {
 public:
  virtual ~IdGenerator() = default;
  virtual TraceId NewTraceId() = 0;
  virtual SpanId NewSpanId() = 0;
};

// Random ids from a per-thread std::mt19937_64 seeded from std::random_device, so that workers
// never contend on a lock or on a shared engine. Not cryptographically strong: ids only need to be
// unique, not unpredictable. Stateless as an object; one instance can be shared by everyone.
//
// A new trace id starts with the time: its first 6 bytes are the milliseconds since the Unix epoch
// (big-endian), the other 10 random (AWS X-Ray's ids carry the time the same way). Trace ids then
// grow with time, so a store's indexes by trace id take each new trace at their end instead of at a
// random page: with a call per trace (a client without Airflow identity), that is most of what the
// store writes. 80 random bits per millisecond keep ids unique, and samplers that read the low 8 bytes
// (ours, OpenTelemetry's TraceIdRatioBased) still see random bits. Span ids are all random.
class RandomIdGenerator final : public IdGenerator {
 public:
  TraceId NewTraceId() override;
  SpanId NewSpanId() override;
};

}  // namespace sparktrace::tracing
