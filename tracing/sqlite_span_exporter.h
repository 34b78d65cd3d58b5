#pragma once
// The embedded store as a pipeline sink: writes each batch to the SQLite database and applies the
// retention policy every `retention_interval`. Runs on its pipeline's exporter thread only.

#include <atomic>
#include <chrono>
#include <memory>

#include "tracing/span_exporter.h"
#include "tracing/sqlite_span_store.h"

namespace sparktrace::tracing {

class SqliteSpanExporter final : public SpanExporter {
 public:
  SqliteSpanExporter(std::unique_ptr<SqliteSpanStore> store,
                     std::chrono::milliseconds retention_interval = std::chrono::minutes(5));

  Result<void> Export(std::span<const Span> spans, Clock::time_point deadline) override;
  void Shutdown() override { shut_down_ = true; }
  SpanExporterCounters counters() const override;

 private:
  std::unique_ptr<SqliteSpanStore> store_;
  const std::chrono::milliseconds retention_interval_;
  Clock::time_point next_retention_;
  std::atomic<bool> shut_down_{false};
  std::atomic<std::uint64_t> exported_{0};
  std::atomic<std::uint64_t> rejected_{0};
  std::atomic<std::uint64_t> failed_{0};
};

}  // namespace sparktrace::tracing
