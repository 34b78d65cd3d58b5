#pragma once
// Where new trace and span ids come from. An interface so that tests (and the simulator) can
// inject predictable ids; production uses RandomIdGenerator.

#include <atomic>
#include <cstdint>

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
// unique, not unpredictable. One instance can be shared by everyone.
//
// A new trace id starts with the time and a sequence: its first 6 bytes are the milliseconds since the
// Unix epoch (big-endian), the next 2 a sequence number within that millisecond, the last 8 random
// (AWS X-Ray's ids carry the time the same way; UUIDv7's counter method orders ids within a
// millisecond the same way). Trace ids from one generator then grow strictly in the order it makes
// them, so a store's indexes by trace id take each new trace at their end instead of at a random
// page, even when a batch's traces all start in one millisecond: with a call per trace (a client
// without Airflow identity) that is most of what the store writes, and B-tree pages an append fills
// stay full (PostgreSQL splits the last page of an index 90/10 on an append, a page elsewhere
// 50/50). More than 65,536 ids in a millisecond borrow the next millisecond's sequence. The random
// 64 bits keep ids of two proxies (two generators) unique, and samplers that read the low 8 bytes
// (ours, OpenTelemetry's TraceIdRatioBased; W3C Trace Context level 2 asks for the low 7 random) see
// random bits. Span ids are all random.
class RandomIdGenerator final : public IdGenerator {
 public:
  TraceId NewTraceId() override;
  SpanId NewSpanId() override;

 private:
  // The first 8 bytes of the last trace id made (milliseconds << 16 | sequence).
  std::atomic<std::uint64_t> last_time_and_sequence_{0};
};

}  // namespace sparktrace::tracing
