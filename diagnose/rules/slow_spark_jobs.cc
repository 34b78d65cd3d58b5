// slow-spark-jobs: the summary. Which phase, job and stages dominate the wall time, and which of
// the other findings explain it, ranked by impact.
//
// Written only when another finding of at least warning severity fired and the combined impact
// passes min_impact_seconds / min_impact_share: a healthy application gets no summary (a clean run
// must produce no finding at all), and a cheap retried failure gets no "slow" verdict.
// Impact: the other findings' impacts combined as independent shares of the wall time,
// wall × (1 − Π (1 − impact_i / wall)), so overlapping causes (skew and the spill it causes) do
// not add up past the wall time.
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {

void SlowSparkJobsRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const SlowSparkJobsThresholds& t = scope.thresholds->slow_spark_jobs;
  if (!t.enabled) return;
  std::vector<const Finding*> causes;
  Severity worst = Severity::kInfo;
  for (const Finding& finding : findings) {
    if (finding.severity < Severity::kWarning) continue;
    causes.push_back(&finding);
    worst = std::max(worst, finding.severity);
  }
  if (causes.empty()) return;
  std::sort(causes.begin(), causes.end(),
            [](const Finding* a, const Finding* b) { return a->impact_seconds > b->impact_seconds; });
  const double wall_seconds = static_cast<double>(scope.WallMs()) / 1000.0;
  double untouched = 1.0;
  for (const Finding* cause : causes) {
    if (wall_seconds > 0) untouched *= 1.0 - std::clamp(cause->impact_seconds / wall_seconds, 0.0, 1.0);
  }

  const double combined =
      wall_seconds > 0 ? wall_seconds * (1.0 - untouched) : causes.front()->impact_seconds;
  if (!PassesImpactGate(scope, combined, t.min_impact_seconds, t.min_impact_share)) return;

  Finding summary = NewFinding(kSlowSparkJobs, scope.base, combined, worst);
  summary.title = "wall time " + Seconds(wall_seconds);
  summary.evidence.push_back(Figure("wall_ms", wall_seconds * 1000, "ms"));
  if (scope.phases && wall_seconds > 0) {
    std::vector<std::pair<std::int64_t, listener::correlate::Phase>> phases;
    for (listener::correlate::Phase phase :
         {listener::correlate::Phase::kResourceWait, listener::correlate::Phase::kCompute,
          listener::correlate::Phase::kIoWrite, listener::correlate::Phase::kIdle}) {
      phases.emplace_back(scope.phases->TotalMs(phase), phase);
      summary.evidence.push_back(Figure(std::string(listener::correlate::PhaseName(phase)) + "_ms",
                                        static_cast<double>(scope.phases->TotalMs(phase)), "ms"));
    }
    std::sort(phases.rbegin(), phases.rend());
    summary.title += ", mostly " + std::string(listener::correlate::PhaseName(phases[0].second)) + " (" +
                     Percent(static_cast<double>(phases[0].first) / 1000.0 / wall_seconds) + ")";
  }
  const listener::correlate::JobRecord* longest_job = nullptr;
  std::int64_t longest_job_ms = -1;
  for (const listener::correlate::JobRecord* job : scope.jobs) {
    if (!job->submission_ms || !job->completion_ms) continue;
    if (*job->completion_ms - *job->submission_ms > longest_job_ms) {
      longest_job_ms = *job->completion_ms - *job->submission_ms;
      longest_job = job;
    }
  }
  if (longest_job) {
    summary.title += "; longest job " + std::to_string(longest_job->job_id) + " (" +
                     Seconds(static_cast<double>(longest_job_ms) / 1000) + ")";
    summary.evidence.push_back(Figure("longest_job_id", longest_job->job_id, "id"));
    summary.evidence.push_back(Figure("longest_job_ms", static_cast<double>(longest_job_ms), "ms"));
  }
  std::vector<std::pair<std::int64_t, const listener::correlate::StageAttemptRecord*>> stages;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    if (auto duration = StageDurationMs(*stage)) stages.emplace_back(*duration, stage);
  }
  std::sort(stages.begin(), stages.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < stages.size() && static_cast<std::int64_t>(i) < t.top_stages; ++i) {
    summary.evidence.push_back(
        Setting("longest_stage_" + std::to_string(i + 1),
                StageLabel(*stages[i].second) + ": " + Seconds(static_cast<double>(stages[i].first) / 1000)));
  }
  std::string top;
  for (std::size_t i = 0; i < causes.size() && i < 3; ++i) {
    top += (top.empty() ? "" : ", ") + causes[i]->id + " " + Seconds(causes[i]->impact_seconds);
    const std::string fix = causes[i]->fix.empty() ? "" : causes[i]->id + ": " + causes[i]->fix.front();
    if (!fix.empty() && std::find(summary.fix.begin(), summary.fix.end(), fix) == summary.fix.end()) {
      summary.fix.push_back(fix);
    }
  }
  summary.title += "; top causes: " + top;
  for (const Finding* cause : causes) summary.related.push_back(RelatedFinding{cause->Key(), "summarises"});
  findings.push_back(std::move(summary));
}

}  // namespace sparktrace::diagnose::rules
