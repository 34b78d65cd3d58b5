#pragma once
// The diagnosis thresholds `sparktrace demo` gives its proxy (--rules). The demo's simulated Spark
// application runs `time_scale` times as fast as the scenario it simulates (50x: an executor that
// takes two minutes arrives after 2.4 s), so the rules' time floors (docs/diagnose-rules.md: every
// `*_seconds` threshold) are scaled by the same factor; shares and ratios stay as they are. Without
// that, no finding could pass a floor in a demo that lasts seconds.
//
// Pure function.

#include <chrono>
#include <string>

namespace sparktrace::cli::demo {

// A rules file (YAML) with every time floor of the default thresholds multiplied by `time_scale`.
std::string ScaledDemoRulesYaml(double time_scale);

// The demo's `suppressions:` section (diagnose/suppression.h), to append to the above: the summary
// finding (slow-spark-jobs, which repeats its causes) of the demo's Airflow task, with a reason and
// an expiry 30 days after `today`, so that the attempt page shows a suppressed finding, muted with
// its reason, and the findings metric does not count it.
std::string DemoSuppressionsYaml(std::chrono::sys_days today);

}  // namespace sparktrace::cli::demo
