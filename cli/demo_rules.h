#pragma once
// The diagnosis thresholds `sparktrace demo` gives its proxy (--rules). The demo's simulated Spark
// application runs `time_scale` times as fast as the scenario it simulates (50x: an executor that
// takes two minutes arrives after 2.4 s), so the rules' time floors (docs/diagnose-rules.md: every
// `*_seconds` threshold) are scaled by the same factor; shares and ratios stay as they are. Without
// that, no finding could pass a floor in a demo that lasts seconds.
//
// Pure function.

#include <string>

namespace sparktrace::cli {

// A rules file (YAML) with every time floor of the default thresholds multiplied by `time_scale`.
std::string ScaledDemoRulesYaml(double time_scale);

}  // namespace sparktrace::cli
