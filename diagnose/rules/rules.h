#pragma once
// Internal to sparktrace_diagnose: the rules, one per file (rules/<id>.cc), all of the
// RuleFunction shape (diagnosis_scope.h). Each .cc says what fires it and how its impact_seconds
// is estimated. Run in this order by diagnose.cc; slow_spark_jobs after the stage rules, as it
// summarises their findings; the plan rules (plan_*.cc) after it: they name the operator behind a
// stage's time and are not part of the summary (an operator's spill is its stage's spill).

#include <vector>

#include "diagnose/diagnosis_scope.h"

namespace sparktrace::diagnose::rules {

void ResourceWaitLongRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void S3WriteSlowRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void DataSkewRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void OomAndSpillRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void ShuffleBottleneckRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void LowParallelismRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void GcPressureRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void IdleExecutorsRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void TaskFailuresRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
// Reads the findings already in `findings` (the other rules' ones).
void SlowSparkJobsRule(const DiagnosisScope& scope, std::vector<Finding>& findings);

// Plan rules: one operator of a SQL execution's final plan (plan_scope.h).
void ExplodingJoinRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void NestedLoopJoinRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void ScanDiscardsMostRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void BroadcastNearLimitRule(const DiagnosisScope& scope, std::vector<Finding>& findings);
void OperatorSpillRule(const DiagnosisScope& scope, std::vector<Finding>& findings);

}  // namespace sparktrace::diagnose::rules
