#include "diagnose/finding_words.h"

#include <cmath>
#include <cstdio>
#include <string_view>

namespace sparktrace::diagnose {
namespace {

// Units that read as plain numbers: a share is 0..1, a ratio a factor, a count and an id are bare.
bool UnitWritten(std::string_view unit) {
  return !unit.empty() && unit != "share" && unit != "ratio" && unit != "count" && unit != "id";
}

}  // namespace

std::string ScopeWords(const FindingScope& scope) {
  switch (scope.kind) {
    case ScopeKind::kApplication:
      return "application";
    case ScopeKind::kOperation:
      return "operation";
    case ScopeKind::kJob:
      return "job " + std::to_string(scope.job_id.value_or(-1));
    case ScopeKind::kStage:
      return "stage " + std::to_string(scope.stage_id.value_or(-1)) + "." +
             std::to_string(scope.stage_attempt.value_or(0)) +
             (scope.job_id ? " (job " + std::to_string(*scope.job_id) + ")" : "");
    case ScopeKind::kSqlOperator:
      return "SQL execution " + std::to_string(scope.sql_execution_id.value_or(-1)) + ", node " +
             std::to_string(scope.plan_node_id.value_or(0)) + " " + scope.plan_node_name;
  }
  return "application";
}

std::string EvidenceWords(const Evidence& evidence) {
  std::string text = evidence.name + "=";
  if (evidence.text) return text + *evidence.text;
  text += NumberWords(evidence.value);
  if (UnitWritten(evidence.unit)) text += " " + evidence.unit;
  if (evidence.threshold) {
    text += " (" + std::string(ComparisonSymbol(evidence.comparison)) + " " +
            NumberWords(*evidence.threshold) + ")";
  }
  return text;
}

std::string NumberWords(double value) {
  char text[48];
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%lld", static_cast<long long>(value));
  } else {
    std::snprintf(text, sizeof text, "%.4g", value);
  }
  return text;
}

}  // namespace sparktrace::diagnose
