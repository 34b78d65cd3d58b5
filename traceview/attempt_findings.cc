#include "traceview/attempt_findings.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <utility>

#include "diagnose/regression/regression.h"
#include "tracing/finding_event.h"

namespace sparktrace::traceview {

using nlohmann::ordered_json;
using tracing::Span;
using tracing::ToHex;

std::vector<FindingEntry> CollectFindings(std::span<const Span> spans, std::vector<SpanFindings>& by_span) {
  std::map<std::string, std::size_t> by_key;
  std::vector<FindingEntry> findings;
  by_span.assign(spans.size(), {});
  for (std::size_t i = 0; i < spans.size(); ++i) {
    for (const tracing::SpanEvent& event : spans[i].events) {
      const std::optional<tracing::FindingEvent> finding = tracing::DecodeFindingEvent(event);
      if (!finding) continue;
      std::string key = finding->key;
      if (key.empty()) key = finding->id + "@" + ToHex(spans[i].span_id);
      by_span[i].ids.push_back(finding->id);
      by_span[i].keys.push_back(key);
      auto [found, inserted] = by_key.emplace(key, findings.size());
      if (!inserted) {
        findings[found->second].json["span_ids"].push_back(ToHex(spans[i].span_id));
        continue;
      }
      constexpr std::string_view kRecipeRoot = "docs/recipes/";
      const std::string recipe_path = finding->recipe.starts_with(kRecipeRoot)
                                          ? finding->recipe.substr(kRecipeRoot.size())
                                          : finding->recipe;
      // The recipe may name an anchor: "troubleshoot/slow-spark-jobs.md#idle-executors".
      ordered_json json = {{"id", finding->id},
                           {"key", key},
                           {"severity", finding->severity},
                           {"scope", finding->scope},
                           {"title", finding->title},
                           {"impact_seconds", finding->impact_seconds},
                           {"evidence", finding->evidence},
                           {"fix", finding->fix},
                           {"related", finding->related},
                           {"recipe", recipe_path},
                           {"recipe_href", recipe_path.empty() ? "" : "/recipes/" + recipe_path},
                           {"span_ids", ordered_json::array({ToHex(spans[i].span_id)})},
                           {"suppressed", nullptr}};
      const bool suppressed = finding->suppressed && !finding->suppressed->reason.empty();
      if (suppressed) {
        json["suppressed"] = {{"reason", finding->suppressed->reason}, {"until", finding->suppressed->until}};
      }
      findings.push_back(
          FindingEntry{std::move(json), finding->impact_seconds, suppressed, finding->IsSummary()});
    }
  }
  // Suppressed findings last (known and accepted); then most impact first; at equal impact the
  // specific finding before the summary that repeats it (slow-spark-jobs sums up the operation's
  // causes with the top cause's impact).
  std::stable_sort(findings.begin(), findings.end(), [](const FindingEntry& a, const FindingEntry& b) {
    if (a.suppressed != b.suppressed) return b.suppressed;
    if (a.impact != b.impact) return a.impact > b.impact;
    return !a.summary && b.summary;
  });
  return findings;
}

void AddRegressionFinding(std::span<const Span> spans, const std::vector<std::optional<std::size_t>>& parent,
                          const diagnose::regression::History& history, bool finished,
                          std::vector<FindingEntry>& findings, std::vector<SpanFindings>& by_span) {
  const auto regression = diagnose::regression::DetectRegression(history, finished);
  std::optional<std::size_t> root;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (parent[i]) continue;
    if (!root || spans[i].start_time_unix_nano < spans[*root].start_time_unix_nano) root = i;
  }
  if (!regression || !root) return;
  const std::string key = "regression@attempt";
  by_span[*root].ids.emplace_back("regression");
  by_span[*root].keys.push_back(key);
  ordered_json evidence = ordered_json::array();
  for (std::string& line : diagnose::regression::RegressionEvidence(*regression))
    evidence.push_back(std::move(line));
  const std::string recipe = "troubleshoot/regression.md";
  ordered_json json = {
      {"id", "regression"},
      {"key", key},
      {"severity", regression->critical ? "critical" : "warning"},
      {"scope", "attempt"},
      {"title", diagnose::regression::RegressionTitle(*regression)},
      {"impact_seconds", regression->delta_ms / 1000},
      {"evidence", std::move(evidence)},
      {"fix", ordered_json::array({"open the findings of the phase that grew (below), and compare this "
                                   "run with the baseline in the history panel"})},
      {"related", ordered_json::array()},
      {"recipe", recipe},
      {"recipe_href", "/recipes/" + recipe},
      {"span_ids", ordered_json::array({ToHex(spans[*root].span_id)})}};
  json["suppressed"] = nullptr;  // not a rule's finding: no rules-file suppression applies
  const double impact = regression->delta_ms / 1000;
  const auto at = std::find_if(findings.begin(), findings.end(), [impact](const FindingEntry& entry) {
    return entry.suppressed || entry.impact < impact;
  });
  findings.insert(at, FindingEntry{std::move(json), impact});
}

}  // namespace sparktrace::traceview
