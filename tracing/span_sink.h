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
  // Thread-safe; returns at once.
  virtual void Submit(Span span) = 0;
};

// Hands every span to each pipeline (SQLite store, OTLP): each has its own queue, so a slow
// collector never costs the store a span.
class SpanFanout final : public SpanSink {
 public:
  void Add(SpanPipeline& pipeline) { pipelines_.push_back(&pipeline); }
  bool empty() const { return pipelines_.empty(); }
  void Submit(Span span) override {
    for (std::size_t i = 0; i + 1 < pipelines_.size(); ++i) pipelines_[i]->Submit(span);
    if (!pipelines_.empty()) pipelines_.back()->Submit(std::move(span));
  }

 private:
  std::vector<SpanPipeline*> pipelines_;  // not owned; set up before the proxy starts
};

}  // namespace sparktrace::tracing
