#include "diagnose/diagnosis_scope.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <utility>

namespace sparktrace::diagnose {

using listener::correlate::StageAttemptRecord;

std::int64_t DiagnosisScope::WallMs() const {
  if (phases) return phases->window.end_ms - phases->window.start_ms;
  std::optional<std::int64_t> first, last;
  for (const StageAttemptRecord* stage : stages) {
    const auto start = stage->StartMs();
    const auto end = stage->completion_ms ? stage->completion_ms : stage->tasks.last_finish_ms;
    if (start) first = first ? std::min(*first, *start) : *start;
    if (end) last = last ? std::max(*last, *end) : *end;
  }
  return first && last && *last > *first ? *last - *first : 0;
}

std::optional<std::int64_t> StageDurationMs(const StageAttemptRecord& stage) {
  const auto start = stage.StartMs();
  const auto end = stage.completion_ms ? stage.completion_ms : stage.tasks.last_finish_ms;
  if (!start || !end || *end < *start) return std::nullopt;
  return *end - *start;
}

double AverageParallelism(const StageAttemptRecord& stage) {
  const std::optional<std::int64_t> duration = StageDurationMs(stage);
  if (!duration || *duration <= 0) return 1.0;
  return std::max(1.0, static_cast<double>(stage.tasks.task_time_ms) / static_cast<double>(*duration));
}

FindingScope StageScope(const DiagnosisScope& scope, const StageAttemptRecord& stage) {
  FindingScope result = scope.base;
  result.kind = ScopeKind::kStage;
  result.job_id = scope.model->JobOfStageAttempt(stage);
  result.stage_id = stage.key.stage_id;
  result.stage_attempt = stage.key.attempt_id;
  result.stage_name = stage.name;
  return result;
}

bool PassesImpactGate(const DiagnosisScope& scope, double impact_seconds, double min_seconds,
                      double min_share) {
  if (impact_seconds < min_seconds) return false;
  const std::int64_t wall_ms = scope.WallMs();
  if (wall_ms <= 0) return true;
  return impact_seconds * 1000.0 >= min_share * static_cast<double>(wall_ms);
}

Finding NewFinding(std::string_view id, FindingScope scope, double impact_seconds, Severity severity) {
  Finding finding;
  finding.id = std::string(id);
  finding.scope = std::move(scope);
  finding.impact_seconds = impact_seconds;
  finding.severity = severity;
  finding.recipe = std::string(RecipeFor(id));
  return finding;
}

Severity SeverityForImpact(const DiagnosisScope& scope, double impact_seconds) {
  const std::int64_t wall_ms = scope.WallMs();
  if (wall_ms > 0 && impact_seconds * 1000.0 >=
                         scope.thresholds->general.critical_impact_share * static_cast<double>(wall_ms)) {
    return Severity::kCritical;
  }
  return Severity::kWarning;
}

std::string PropertyOr(const DiagnosisScope& scope, std::string_view key, std::string_view fallback) {
  const std::optional<std::string_view> value = scope.model->Property(key);
  return std::string(value ? *value : fallback);
}

std::string AdaptiveEnabled(const DiagnosisScope& scope) {
  const std::string_view version = scope.model->application().spark_version;
  int major = 0, minor = 0;
  const char* begin = version.data();
  const char* end = begin + version.size();
  const auto parsed = std::from_chars(begin, end, major);
  bool on_by_default = major >= 4;
  if (parsed.ec == std::errc() && parsed.ptr != end && *parsed.ptr == '.') {
    std::from_chars(parsed.ptr + 1, end, minor);
    on_by_default = major > 3 || (major == 3 && minor >= 2);
  }
  return PropertyOr(scope, "spark.sql.adaptive.enabled", on_by_default ? "true" : "false");
}

Evidence Figure(std::string name, double value, std::string unit) {
  Evidence evidence;
  evidence.name = std::move(name);
  evidence.value = value;
  evidence.unit = std::move(unit);
  return evidence;
}

Evidence Crossed(std::string name, double value, std::string unit, double threshold, Comparison comparison) {
  Evidence evidence = Figure(std::move(name), value, std::move(unit));
  evidence.threshold = threshold;
  evidence.comparison = comparison;
  return evidence;
}

Evidence Setting(std::string key, std::string value) {
  Evidence evidence;
  evidence.name = std::move(key);
  evidence.text = std::move(value);
  return evidence;
}

std::string Seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, seconds >= 100 ? "%.0fs" : "%.1fs", seconds);
  return text;
}

std::string Bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 || bytes >= 100 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return text;
}

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%.0f%%", share * 100);
  return text;
}

std::string Ratio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 100 ? "%.0fx" : "%.1fx", ratio);
  return text;
}

std::string StageLabel(const StageAttemptRecord& stage) {
  std::string label =
      "stage " + std::to_string(stage.key.stage_id) + "." + std::to_string(stage.key.attempt_id);
  if (!stage.name.empty()) label += " (" + stage.name + ")";
  return label;
}

}  // namespace sparktrace::diagnose
