#pragma once
// Suppression: a rules file's decision that a finding is known and accepted for a while. A
// suppressed finding is still reported (muted, with its reason) but is not counted in
// sparktrace_findings_total, so the alerts on it do not fire. Every suppression expires: after its
// `until` day (UTC) it is ignored, and whoever loads it says so.
//
// Rules file (rule_thresholds.h, docs/diagnose-rules.md "Suppressions"):
//   suppressions:
//     - {id: s3-write-slow, dag: "etl.*", task: "load_?", reason: "bucket migration, INFRA-12",
//        until: 2026-11-01}
// `id` is a rule id or "*"; `dag` and `task` are globs (glob_match.h) over the Airflow task's
// identity. A finding with no Airflow identity (`sparktrace diagnose`, applications no Airflow task
// ran) matches only suppressions whose dag and task are both "*".
//
// Plain values and pure functions; thread-safe.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diagnose/finding.h"

namespace sparktrace::diagnose {

inline constexpr std::string_view kAnyGlob = "*";

struct Suppression {
  std::size_t number = 0;  // 1-based position in the file's list ("suppression #2")
  std::string finding_id;  // a rule id, or "*"
  std::string dag_glob;
  std::string task_glob;
  std::string reason;
  std::chrono::sys_days until{};  // the last day (UTC) it applies

  bool ExpiredOn(std::chrono::sys_days today) const { return today > until; }
  // "suppression #2 (s3-write-slow on dag etl.*, task *)": how logs name it.
  std::string Describe() const;
};

// The Airflow task a finding belongs to; nullopt where there is none.
struct SuppressionTask {
  std::string_view dag_id;
  std::string_view task_id;
};

// The first suppression (in file order) not expired on `today` that matches.
const Suppression* FindSuppression(const std::vector<Suppression>& suppressions, std::string_view finding_id,
                                   const std::optional<SuppressionTask>& task, std::chrono::sys_days today);

// Marks each finding a suppression matches (Finding::suppressed); the others are left unmarked.
void ApplySuppressions(std::vector<Finding>& findings, const std::vector<Suppression>& suppressions,
                       const std::optional<SuppressionTask>& task, std::chrono::sys_days today);

// The UTC day of `now`: the day suppressions are judged on.
std::chrono::sys_days UtcDay(std::chrono::system_clock::time_point now);
// "2026-11-01"; and back (nullopt unless a valid date written exactly so).
std::string DateText(std::chrono::sys_days day);
std::optional<std::chrono::sys_days> ParseDate(std::string_view text);

// "suppression #2 (s3-write-slow on dag etl.*, task *) expired on 2026-11-01: ignored".
std::string ExpiredMessage(const Suppression& suppression);

}  // namespace sparktrace::diagnose
