#pragma once
// SpanWriter: the store's writing role, as the store exporter and the event-log feeds use it
// (span_store.h says what every backend promises of it).

#include <cstddef>
#include <span>

#include "common/result.h"
#include "tracing/span.h"

namespace sparktrace::tracing::store {

struct WriteStats {
  std::size_t spans_written = 0;
  // Spans with an all-zero trace or span id cannot be stored or looked up; they are left out and
  // counted here for the exporter's metrics.
  std::size_t spans_rejected = 0;
  std::size_t traces_touched = 0;
};

class SpanWriter {
 public:
  virtual ~SpanWriter() = default;

  // Stores a batch in one transaction, all or nothing; a span whose (trace id, span id) is stored
  // already is replaced, so a batch delivered twice changes nothing. The per-trace summaries and the
  // task index are current when it returns. Writers only: kInvalidArgument on a read-only store.
  virtual Result<WriteStats> Write(std::span<const Span> spans) = 0;
};

}  // namespace sparktrace::tracing::store
