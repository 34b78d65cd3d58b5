// data-skew: a stage whose slowest task ran far longer than its median task, because it had far
// more data to process than the median one.
//
// Fires for a stage with at least min_tasks successful tasks when
//   * max / median task duration ≥ min_duration_ratio and max − median ≥ min_excess_seconds
//     (the absolute floor: short stages never fire), and
//   * the per-task bytes (input + shuffle read) are skewed too, max / median ≥ min_bytes_ratio —
//     unless the largest task read less than min_max_task_bytes, where bytes say nothing and the
//     durations alone decide. Durations skewed over even bytes are a slow node or a slow task,
//     not data skew, and do not fire here.
//   * and the impact passes the gate.
// Impact: max − median task duration, bounded by the stage's duration. Had the longest task taken
// the median time, the stage (waiting on its last task) would have ended that much sooner.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

// Spark's byte strings: "256MB", "64m", "1g", "1048576b", "100k".
std::optional<double> ParseSparkBytes(std::string_view text) {
  double number = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (error != std::errc()) return std::nullopt;
  std::string unit(end, text.data() + text.size());
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "b") return number;
  if (unit == "k" || unit == "kb") return number * 1024;
  if (unit == "m" || unit == "mb") return number * 1024 * 1024;
  if (unit == "g" || unit == "gb") return number * 1024 * 1024 * 1024;
  if (unit == "t" || unit == "tb") return number * 1024.0 * 1024 * 1024 * 1024;
  return std::nullopt;
}

// Why AQE's skew-join handling did not remove this skew, in words, with the settings it read.
std::string WhyAdaptiveDidNotHelp(const DiagnosisScope& scope, double max_task_bytes, Finding& finding) {
  const std::string adaptive = AdaptiveEnabled(scope);
  const std::string skew_join = PropertyOr(scope, "spark.sql.adaptive.skewJoin.enabled", "true");
  const std::string threshold_text =
      PropertyOr(scope, "spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", "256MB");
  const std::string factor = PropertyOr(scope, "spark.sql.adaptive.skewJoin.skewedPartitionFactor", "5");
  finding.evidence.push_back(Setting("spark.sql.adaptive.enabled", adaptive));
  finding.evidence.push_back(Setting("spark.sql.adaptive.skewJoin.enabled", skew_join));
  finding.evidence.push_back(
      Setting("spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes", threshold_text));
  if (adaptive != "true")
    return "AQE was off (spark.sql.adaptive.enabled=" + adaptive + "), so nothing split the skewed partition";
  if (skew_join != "true")
    return "AQE was on but its skew-join handling was off (spark.sql.adaptive.skewJoin.enabled=false)";
  const std::optional<double> threshold = ParseSparkBytes(threshold_text);
  if (threshold && max_task_bytes > 0 && max_task_bytes < *threshold) {
    return "AQE skew-join handling was on, but the largest partition (" + Bytes(max_task_bytes) +
           ") is below spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes (" + threshold_text +
           "), so AQE did not split it";
  }
  return "AQE skew-join handling was on (factor " + factor +
         "), but it only splits partitions of sort-merge joins: skew in an aggregation, a window, a "
         "repartition or a join AQE did not plan as sort-merge is left as it is";
}

}  // namespace

void DataSkewRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const DataSkewThresholds& t = scope.thresholds->data_skew;
  if (!t.enabled) return;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::DurationSample& durations = stage->tasks.successful_durations;
    if (durations.count() < t.min_tasks) continue;
    const double median_ms = static_cast<double>(durations.Quantile(0.5).value_or(0));
    const double max_ms = static_cast<double>(durations.max_ms());
    const double ratio = max_ms / std::max(median_ms, 1.0);
    const double excess_seconds = (max_ms - median_ms) / 1000.0;
    if (ratio < t.min_duration_ratio || excess_seconds < t.min_excess_seconds) continue;

    const listener::correlate::DurationSample& bytes = stage->tasks.successful_task_bytes;
    const double max_bytes = static_cast<double>(bytes.count() > 0 ? bytes.max_ms() : 0);
    const double median_bytes = static_cast<double>(bytes.Quantile(0.5).value_or(0));
    const bool bytes_measurable = max_bytes >= static_cast<double>(t.min_max_task_bytes);
    const double bytes_ratio = max_bytes / std::max(median_bytes, 1.0);
    if (bytes_measurable && bytes_ratio < t.min_bytes_ratio) continue;  // a straggler, not data skew

    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    double impact = excess_seconds;
    if (duration_ms) impact = std::min(impact, static_cast<double>(*duration_ms) / 1000.0);
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;

    Finding finding =
        NewFinding(kDataSkew, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    finding.title = StageLabel(*stage) + ": the slowest of " + std::to_string(durations.count()) +
                    " tasks took " + Seconds(max_ms / 1000) + ", " + Ratio(ratio) + " the median " +
                    Seconds(median_ms / 1000) +
                    (bytes_measurable ? " and read " + Bytes(max_bytes) + ", " + Ratio(bytes_ratio) +
                                            " the median " + Bytes(median_bytes)
                                      : "");
    finding.evidence = {
        Figure("max_task_ms", max_ms, "ms"),
        Figure("median_task_ms", median_ms, "ms"),
        Crossed("duration_ratio", ratio, "ratio", t.min_duration_ratio, Comparison::kAtLeast),
        Crossed("excess_ms", excess_seconds * 1000, "ms", t.min_excess_seconds * 1000, Comparison::kAtLeast),
        Figure("max_task_bytes", max_bytes, "bytes"),
        Figure("median_task_bytes", median_bytes, "bytes"),
    };
    if (bytes_measurable) {
      finding.evidence.push_back(
          Crossed("bytes_ratio", bytes_ratio, "ratio", t.min_bytes_ratio, Comparison::kAtLeast));
    }
    if (duration_ms)
      finding.evidence.push_back(Figure("stage_duration_ms", static_cast<double>(*duration_ms), "ms"));
    const std::string why = WhyAdaptiveDidNotHelp(scope, max_bytes, finding);
    finding.title += "; " + why;
    finding.fix.clear();
    // Only advise turning on what was off: the evidence holds the settings the log had.
    const auto setting_is_true = [&finding](std::string_view key) {
      return std::any_of(finding.evidence.begin(), finding.evidence.end(),
                         [key](const Evidence& e) { return e.name == key && e.text && *e.text == "true"; });
    };
    if (!setting_is_true("spark.sql.adaptive.enabled") ||
        !setting_is_true("spark.sql.adaptive.skewJoin.enabled")) {
      finding.fix.push_back(
          "turn on AQE skew-join splitting: spark.sql.adaptive.enabled=true, "
          "spark.sql.adaptive.skewJoin.enabled=true");
    }
    const std::vector<std::string> always = {
        "let AQE see this partition as skewed: spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes=" +
            Bytes(std::max(64.0 * static_cast<double>(kMiB), max_bytes / 4)) +
            " and spark.sql.adaptive.skewJoin.skewedPartitionFactor=3; "
            "spark.sql.adaptive.advisoryPartitionSizeInBytes=64m",
        "if the skew is in an aggregation or a non-join shuffle: salt the hot key (add a random suffix, "
        "aggregate "
        "twice) or repartition on a better-distributed key",
        "if one join side is small: broadcast it (spark.sql.autoBroadcastJoinThreshold=<its size>, or a "
        "broadcast hint)",
    };
    finding.fix.insert(finding.fix.end(), always.begin(), always.end());
    findings.push_back(std::move(finding));
  }
}

}  // namespace sparktrace::diagnose::rules
