#pragma once
// Internal to sparktrace_diagnose: what one rule looks at (the application as a whole, or one
// Spark Connect operation), the common interface of the rules (rules/rules.h), and the figures and
// formatting the rules share.
//
// Pure functions over a model that must outlive the scope; thread-safe for concurrent readers.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diagnose/finding.h"
#include "diagnose/rule_thresholds.h"
#include "listener/correlate/application_model.h"
#include "listener/correlate/phases.h"

namespace sparktrace::diagnose {

struct DiagnosisScope {
  const listener::correlate::ApplicationModel* model = nullptr;
  const RuleThresholds* thresholds = nullptr;
  FindingScope base;  // kApplication, or kOperation with its id
  const listener::correlate::ConnectOperationRecord* operation = nullptr;  // set for an operation
  std::optional<listener::correlate::PhaseBreakdown> phases;               // over the scope's window
  std::vector<const listener::correlate::StageAttemptRecord*> stages;      // the scope's stage attempts
  std::vector<const listener::correlate::JobRecord*> jobs;                 // the scope's jobs

  // The scope's wall time in ms (its phase window), else the span of its stages; 0 when unknown.
  std::int64_t WallMs() const;
  bool is_operation() const { return operation != nullptr; }
};

// A rule: appends its findings for `scope` (none when nothing crosses its thresholds).
using RuleFunction = void (*)(const DiagnosisScope& scope, std::vector<Finding>& findings);

// ---- Figures ------------------------------------------------------------------------------

// Submission (else first launch) → completion (else last task finish); nullopt when unknown.
std::optional<std::int64_t> StageDurationMs(const listener::correlate::StageAttemptRecord& stage);
// Task time / stage duration: how many tasks ran at once on average (at least 1).
double AverageParallelism(const listener::correlate::StageAttemptRecord& stage);
// A finding scope for one stage attempt of `scope` (with its job, when one lists it).
FindingScope StageScope(const DiagnosisScope& scope, const listener::correlate::StageAttemptRecord& stage);
// impact ≥ min_seconds, and impact ≥ min_share of the wall time (when the wall time is known).
bool PassesImpactGate(const DiagnosisScope& scope, double impact_seconds, double min_seconds,
                      double min_share);
// Warning, or critical when the impact is at least general.critical_impact_share of the wall time.
Severity SeverityForImpact(const DiagnosisScope& scope, double impact_seconds);
// The value of a configuration property, else `fallback`.
std::string PropertyOr(const DiagnosisScope& scope, std::string_view key, std::string_view fallback);
// spark.sql.adaptive.enabled as the application ran: the property, else its default for the log's Spark
// version ("true" from 3.2, which turned AQE on by default).
std::string AdaptiveEnabled(const DiagnosisScope& scope);

// A finding of rule `id` with its scope, impact and severity, and the rule's recipe (RecipeFor);
// the rule adds the title, evidence, fix and links.
Finding NewFinding(std::string_view id, FindingScope scope, double impact_seconds, Severity severity);

// ---- Evidence and text --------------------------------------------------------------------

Evidence Figure(std::string name, double value, std::string unit);
Evidence Crossed(std::string name, double value, std::string unit, double threshold, Comparison comparison);
Evidence Setting(std::string key, std::string value);

std::string Seconds(double seconds);  // "12.3s"
std::string Bytes(double bytes);      // "1.5 GiB", "300 MiB", "12 KiB", "17 B"
std::string Percent(double share);    // "23%"
std::string Ratio(double ratio);      // "12.5x"
std::string StageLabel(
    const listener::correlate::StageAttemptRecord& stage);  // "stage 3.0 (save at X.scala:42)"

}  // namespace sparktrace::diagnose
