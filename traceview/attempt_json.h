#pragma once
// The JSON of one attempt (docs/trace-view-api.md, schema sparktrace.attempt/1): the spans in tree
// order with their lanes and labels, the exclusive breakdown, the findings ranked by impact, the
// executor lane, the critical path and the history, all computed here so that the page only lays out.
//
// Pure functions; thread-safe.

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "diagnose/regression/history.h"
#include "traceview/breakdown.h"
#include "traceview/cost_of_spans.h"
#include "tracing/span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

struct AttemptLink {
  std::string run_id;
  std::int64_t try_number = 1;
  std::string state;
  double wall_ms = 0;
  std::string href;
};

// What the page shows besides the spans: who the attempt is and where its neighbours are.
struct AttemptContext {
  bool airflow = true;
  tracing::store::TaskAttemptKey key;
  std::string name;
  std::vector<std::string> trace_ids;
  std::string state;               // from the task index
  std::vector<AttemptLink> tries;  // the attempts of this run, by try number
  std::optional<AttemptLink> previous_run;
  std::optional<AttemptLink> next_run;
  diagnose::regression::History history;
  // The downloads of these spans (attempt_url.h): AttemptApiHref or TraceApiHref with a Download.
  std::string chrome_trace_href;
  std::string otlp_href;
  // Where Spark's own pages are, for the links of job, stage and operation spans ("" when unknown):
  // the live driver's UI (the proxy's --spark-ui) and a History Server (--history-server).
  std::string spark_ui_url;
  std::string history_server_url;
  // Prices that turn the attempt's cost into money (--cost-core-hour, --cost-gib-hour); unset: none.
  diagnose::cost::CostPrices prices;
  // At most this many spans are listed, the rest summarised (--view-max-spans, span_bound.h); 0: all.
  std::size_t max_spans = 0;
};

// Compact JSON text (the spans are written directly, without a JSON tree). `breakdown` is
// ComputeBreakdown(spans): the caller needs it too (the history's current run, the downloads).
std::string AttemptJson(std::span<const tracing::Span> spans, const Breakdown& breakdown,
                        const AttemptContext& context);

}  // namespace sparktrace::traceview
