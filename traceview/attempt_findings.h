#pragma once
// The findings of an attempt as the trace view lists them: decoded from the spans' finding events
// (tracing/finding_event.h), one entry per finding key with every span it is attached to, plus the
// regression against the task's history (diagnose/regression/regression.h), ranked by impact. Apart from the
// rest of the attempt's JSON because ranking and de-duplicating findings is its own set of rules.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "diagnose/regression/history.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// One finding of the attempt as the page lists it, with what ranks it.
struct FindingEntry {
  nlohmann::ordered_json json;
  double impact = 0;
  bool suppressed = false;  // a rules-file suppression muted it: ranked after the others
  bool summary = false;     // repeats the findings it summarises: after them at equal impact
};

// The findings attached to one span: their rule ids and their keys (unique within the attempt).
struct SpanFindings {
  std::vector<std::string> ids;
  std::vector<std::string> keys;
};

// Findings from the sparktrace.finding span events, one per finding key (a stage finding is on the
// stage and on its operation's lifecycle span), with every span it is attached to; `by_span` gets
// each span's. Ranked: suppressed last, then by impact, a specific finding before its summary.
std::vector<FindingEntry> CollectFindings(std::span<const tracing::Span> spans,
                                          std::vector<SpanFindings>& by_span);

// The regression finding (diagnose/regression/regression.h), if the history shows one, attached to the
// attempt's first root span and ranked into `findings` by its impact: the time lost against the
// baseline. `finished`: the attempt has no span still running.
void AddRegressionFinding(std::span<const tracing::Span> spans,
                          const std::vector<std::optional<std::size_t>>& parent,
                          const diagnose::regression::History& history, bool finished,
                          std::vector<FindingEntry>& findings, std::vector<SpanFindings>& by_span);

}  // namespace sparktrace::traceview
