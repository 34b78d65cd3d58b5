#pragma once
// Where finished spans go from the data path. Submit must never block on an exporter.

#include <memory>
#include <vector>

#include "tracing/span.h"
#include "tracing/span_pipeline.h"

namespace sparktrace::tracing {

class SpanSink {
 public:
  virtual ~SpanSink() = default;
  // A span that has ended, submitted for the first time. Every sink takes it. Thread-safe; returns
  // at once.
  virtual void Submit(Span span) = 0;
  // A live version of a span: still open (its end is "so far"), or an update of one already
  // submitted final. Only sinks that show live state take it (the store: the trace view draws
  // running bars from it); an OTLP collector never does, because OTLP spans are immutable once
  // sent: a second version of the same id shows as a duplicate in Tempo and Jaeger.
  // Thread-safe; returns at once.
  virtual void SubmitLive(Span span) = 0;
};

// Hands every span to each pipeline (SQLite store, OTLP): each has its own queue, so a slow
// collector never costs the store a span. Live versions go only to the pipelines added with
// LiveSpans::kTake.
enum class LiveSpans : bool { kSkip, kTake };

class SpanFanout final : public SpanSink {
 public:
  void Add(SpanPipeline& pipeline, LiveSpans live) { pipelines_.push_back({&pipeline, live}); }
  bool empty() const { return pipelines_.empty(); }
  void Submit(Span span) override { SubmitTo(std::move(span), LiveSpans::kSkip); }
  void SubmitLive(Span span) override { SubmitTo(std::move(span), LiveSpans::kTake); }

 private:
  struct Target {
    SpanPipeline* pipeline;  // not owned; set up before the proxy starts
    LiveSpans live;
  };
  // Copies the span for all takers but the last, which gets it moved.
  void SubmitTo(Span span, LiveSpans needed) {
    const Target* last = nullptr;
    for (const Target& target : pipelines_) {
      if (needed == LiveSpans::kTake && target.live != LiveSpans::kTake) continue;
      if (last != nullptr) last->pipeline->Submit(span);
      last = &target;
    }
    if (last != nullptr) last->pipeline->Submit(std::move(span));
  }

  std::vector<Target> pipelines_;
};

}  // namespace sparktrace::tracing
