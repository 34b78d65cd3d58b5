#include "diagnose/diagnose.h"

#include <algorithm>
#include <array>

#include "diagnose/diagnosis_scope.h"
#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose {
namespace {

// The order rules run in; the summary after the stage rules, as it reads their findings; the plan
// rules after it, outside the summary (rules/rules.h).
constexpr std::array<RuleFunction, 15> kRules = {
    rules::ResourceWaitLongRule, rules::S3WriteSlowRule,        rules::DataSkewRule,
    rules::OomAndSpillRule,      rules::ShuffleBottleneckRule,  rules::LowParallelismRule,
    rules::GcPressureRule,       rules::IdleExecutorsRule,      rules::TaskFailuresRule,
    rules::SlowSparkJobsRule,    rules::ExplodingJoinRule,      rules::NestedLoopJoinRule,
    rules::ScanDiscardsMostRule, rules::BroadcastNearLimitRule, rules::OperatorSpillRule,
};

std::vector<Finding> Run(const DiagnosisScope& scope) {
  std::vector<Finding> findings;
  for (RuleFunction rule : kRules) {
    if (rule == rules::SlowSparkJobsRule) LinkRelatedFindings(findings);
    rule(scope, findings);
  }
  RankFindings(findings);
  return findings;
}

}  // namespace

std::vector<Finding> DiagnoseApplication(const listener::correlate::ApplicationModel& model,
                                         const RuleThresholds& thresholds) {
  DiagnosisScope scope;
  scope.model = &model;
  scope.thresholds = &thresholds;
  scope.base.kind = ScopeKind::kApplication;
  scope.base.app_id = model.application().app_id;
  scope.phases = listener::correlate::ApplicationPhases(model);
  for (const auto& [key, stage] : model.stages()) scope.stages.push_back(&stage);
  for (const auto& [id, job] : model.jobs()) scope.jobs.push_back(&job);
  return Run(scope);
}

std::vector<Finding> DiagnoseOperation(const listener::correlate::ApplicationModel& model,
                                       const listener::correlate::ConnectOperationRecord& operation,
                                       const RuleThresholds& thresholds) {
  DiagnosisScope scope;
  scope.model = &model;
  scope.thresholds = &thresholds;
  scope.operation = &operation;
  scope.base.kind = ScopeKind::kOperation;
  scope.base.app_id = model.application().app_id;
  scope.base.operation_id = operation.operation_id;
  scope.phases = listener::correlate::OperationPhases(model, operation);
  for (std::int32_t job_id : model.JobsOfOperation(operation.operation_id)) {
    const auto job = model.jobs().find(job_id);
    if (job == model.jobs().end()) continue;
    scope.jobs.push_back(&job->second);
    for (const listener::correlate::StageAttemptRecord* stage : model.StagesOfJob(job_id))
      scope.stages.push_back(stage);
  }
  return Run(scope);
}

void RankFindings(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    if (a.impact_seconds != b.impact_seconds) return a.impact_seconds > b.impact_seconds;
    // A summary that ties with its only cause comes first, as it would with two causes.
    if ((a.id == kSlowSparkJobs) != (b.id == kSlowSparkJobs)) return a.id == kSlowSparkJobs;
    if (a.severity != b.severity) return a.severity > b.severity;
    return a.Key() < b.Key();
  });
}

void LinkRelatedFindings(std::vector<Finding>& findings) {
  const auto link = [](Finding& cause, Finding& effect) {
    cause.related.push_back(RelatedFinding{effect.Key(), "causes"});
    effect.related.push_back(RelatedFinding{cause.Key(), "caused-by"});
  };
  // On one stage attempt: skew → spill/OOM → GC, each linked to the nearest earlier link present.
  constexpr std::array<std::string_view, 3> kChain = {kDataSkew, kOomAndSpill, kGcPressure};
  for (Finding& first : findings) {
    if (first.scope.kind != ScopeKind::kStage) continue;
    const auto rank = std::find(kChain.begin(), kChain.end(), first.id);
    if (rank == kChain.end()) continue;
    // The next link after `first` on the same stage (skipping missing ones).
    Finding* next = nullptr;
    std::ptrdiff_t next_rank = static_cast<std::ptrdiff_t>(kChain.size());
    for (Finding& other : findings) {
      if (&other == &first || other.scope.kind != ScopeKind::kStage ||
          other.scope.stage_id != first.scope.stage_id ||
          other.scope.stage_attempt != first.scope.stage_attempt) {
        continue;
      }
      const auto other_rank = std::find(kChain.begin(), kChain.end(), other.id) - kChain.begin();
      if (other_rank > rank - kChain.begin() && other_rank < next_rank) {
        next = &other;
        next_rank = other_rank;
      }
    }
    if (next != nullptr) link(first, *next);
  }
  // Out-of-memory failures are both task failures and memory findings.
  const auto has_figure = [](const Finding& finding, std::string_view name) {
    return std::any_of(finding.evidence.begin(), finding.evidence.end(),
                       [name](const Evidence& e) { return e.name == name && (e.text || e.value > 0); });
  };
  for (Finding& failures : findings) {
    if (failures.id != kTaskFailures || !has_figure(failures, "out_of_memory_tasks")) continue;
    for (Finding& memory : findings) {
      if (memory.id != kOomAndSpill ||
          !(has_figure(memory, "out_of_memory_tasks") || has_figure(memory, "executors_lost_to_memory"))) {
        continue;
      }
      failures.related.push_back(RelatedFinding{memory.Key(), "same-cause"});
      memory.related.push_back(RelatedFinding{failures.Key(), "same-cause"});
    }
  }
}

}  // namespace sparktrace::diagnose
