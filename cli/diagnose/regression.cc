#include "cli/diagnose/regression.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "diagnose/regression/history.h"
#include "diagnose/regression/regression.h"
#include "diagnose/regression_of_model.h"
#include "tracing/span_vocabulary.h"

namespace diagnosis = sparktrace::diagnose;  // the diagnose module, not cli::diagnose

namespace sparktrace::cli::diagnose {
namespace {

using diagnosis::regression::ComputeHistory;
using diagnosis::regression::DetectRegression;
using diagnosis::regression::History;
using diagnosis::regression::PhaseDelta;
using diagnosis::regression::Regression;
using diagnosis::regression::RegressionThresholds;
using diagnosis::regression::RegressionTitle;
using diagnosis::regression::RunSummary;

constexpr std::string_view kRegressionRecipe = "troubleshoot/regression.md";

// A log as one run of its application (diagnose/regression_of_model.h), named by its path; a
// truncated log is neither ended nor running: it is left out.
std::optional<RunSummary> RunOf(const DiagnosedLog& log) {
  const std::string_view status = ApplicationStatus(log);
  if (status == "truncated") return std::nullopt;
  std::optional<RunSummary> run = diagnosis::RunOfApplication(log.model, status == "in_progress");
  if (run) run->run_id = log.path;
  return run;
}

std::string WholeSeconds(double ms) { return std::to_string(static_cast<long long>(ms / 1000)) + " s"; }

diagnosis::Finding RegressionFinding(const DiagnosedLog& log, const Regression& regression) {
  diagnosis::Finding finding;
  finding.id = "regression";
  finding.severity = regression.critical ? diagnosis::Severity::kCritical : diagnosis::Severity::kWarning;
  finding.scope.kind = diagnosis::ScopeKind::kApplication;
  finding.scope.app_id = log.model.application().app_id;
  finding.title = RegressionTitle(regression);
  const RegressionThresholds thresholds;
  finding.evidence.push_back({"wall_ms", regression.current_ms, std::nullopt, "ms",
                              regression.median_ms + std::max(thresholds.min_seconds * 1000,
                                                              thresholds.min_ratio * regression.median_ms),
                              diagnosis::Comparison::kAtLeast});
  finding.evidence.push_back({"baseline_median_ms", regression.median_ms, std::nullopt, "ms", std::nullopt,
                              diagnosis::Comparison::kNone});
  finding.evidence.push_back({"baseline_runs", static_cast<double>(regression.baseline_runs), std::nullopt,
                              "count", std::nullopt, diagnosis::Comparison::kNone});
  for (const PhaseDelta& grown : regression.grown) {
    finding.evidence.push_back({std::string(tracing::ViewPhaseName(grown.phase)) + "_delta_ms",
                                grown.delta_ms, std::nullopt, "ms", std::nullopt,
                                diagnosis::Comparison::kNone});
  }
  finding.impact_seconds = regression.delta_ms / 1000;
  finding.fix = {
      "read the findings of the phase that grew most (" +
          (regression.grown.empty() ? std::string("none grew alone")
                                    : std::string(tracing::ViewPhaseLabel(regression.grown.front().phase)) +
                                          ", +" + WholeSeconds(regression.grown.front().delta_ms)) +
          "), and compare this run's log with an earlier one's",
      "with the proxy, the attempt page's history panel shows each run's phases side by side"};
  finding.recipe = std::string(kRegressionRecipe);
  return finding;
}

}  // namespace

void AddRegressionFindings(std::vector<DiagnosedLog>& logs) {
  std::map<std::string, std::vector<std::size_t>> by_name;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const std::string& name = logs[i].model.application().app_name;
    if (!name.empty()) by_name[name].push_back(i);
  }
  for (const auto& [name, members] : by_name) {
    if (members.size() < 2) continue;
    for (std::size_t current : members) {
      std::optional<RunSummary> current_run = RunOf(logs[current]);
      if (!current_run || current_run->state == "running") continue;
      std::vector<RunSummary> runs;
      for (std::size_t other : members) {
        std::optional<RunSummary> run = other == current ? current_run : RunOf(logs[other]);
        if (!run) continue;
        run->current = other == current;
        runs.push_back(std::move(*run));
      }
      const History history = ComputeHistory(std::move(runs));
      const std::optional<Regression> regression = DetectRegression(history, true);
      if (!regression) continue;
      std::vector<diagnosis::Finding>& findings = logs[current].findings;
      diagnosis::Finding finding = RegressionFinding(logs[current], *regression);
      const auto at = std::find_if(findings.begin(), findings.end(), [&](const diagnosis::Finding& other) {
        return other.impact_seconds < finding.impact_seconds;
      });
      findings.insert(at, std::move(finding));
    }
  }
}

}  // namespace sparktrace::cli::diagnose
