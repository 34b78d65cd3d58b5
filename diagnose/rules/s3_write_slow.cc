// s3-write-slow: an output-writing stage (its tasks reported Output Metrics) whose tasks are far
// slower than the compute stages' tasks, or whose output throughput per task is low. Both point at
// the output committer and the upload path (S3A settings), whatever the storage.
//
// Fires for a writing stage of at least min_stage_seconds when
//   * its task p95 ≥ min_p95_ratio × the compute reference p95 (the median of the p95s of the
//     scope's non-writing stages of at least min_compute_stage_seconds, with at least
//     min_compute_tasks successful tasks among them), and its median task likewise against the
//     reference median (so a few skewed tasks do not make a slow write), both after taking out
//     the stage's shuffle and GC share of run time (shuffle-bottleneck and gc-pressure explain
//     that), or
//   * it wrote ≥ min_output_bytes at < min_task_throughput_mib_per_second per second of task time,
// and the impact passes the gate.
// Impact: the write-stage time above what the reference predicts. With tasks as fast as compute
// tasks, the stage would take duration × reference_p95 / write_p95, so the excess is
// duration × (1 − 1/ratio); with the target throughput it would take duration × throughput / target.
// The larger of the two that apply. It ignores the commit work after the stage (driver side).
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose {
namespace {

struct ComputeReference {
  double p95_ms = 0;
  double p50_ms = 0;
  std::int64_t tasks = 0;
};

std::optional<ComputeReference> ComputeReferenceOf(const DiagnosisScope& scope, const S3WriteThresholds& t) {
  const std::int64_t min_tasks = t.min_compute_tasks;
  std::vector<double> p95s, p50s;
  std::int64_t tasks = 0;
  for (const listener::StageAttemptRecord* stage : scope.stages) {
    if (stage->tasks.WritesOutput() || stage->tasks.successful_durations.count() < 2) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms || static_cast<double>(*duration_ms) < t.min_compute_stage_seconds * 1000) continue;
    p95s.push_back(static_cast<double>(stage->tasks.successful_durations.Quantile(0.95).value_or(0)));
    p50s.push_back(static_cast<double>(stage->tasks.successful_durations.Quantile(0.5).value_or(0)));
    tasks += stage->tasks.successful_durations.count();
  }
  if (p95s.empty() || tasks < min_tasks) return std::nullopt;
  std::sort(p95s.begin(), p95s.end());
  std::sort(p50s.begin(), p50s.end());
  const double p95 = p95s[(p95s.size() - 1) / 2];
  const double p50 = p50s[(p50s.size() - 1) / 2];
  if (p95 <= 0 || p50 <= 0) return std::nullopt;
  return ComputeReference{p95, p50, tasks};
}

void AddCommitterFixes(const DiagnosisScope& scope, Finding& finding) {
  const std::string committer = PropertyOr(scope, "fs.s3a.committer.name", "file");
  const std::string protocol = PropertyOr(scope, "spark.sql.sources.commitProtocolClass", "default");
  const std::string algorithm = PropertyOr(scope, "mapreduce.fileoutputcommitter.algorithm.version", "1");
  const std::string buffer = PropertyOr(scope, "fs.s3a.fast.upload.buffer", "disk");
  const std::string multipart = PropertyOr(scope, "fs.s3a.multipart.size", "64M");
  const std::string threads = PropertyOr(scope, "fs.s3a.threads.max", "10");
  const std::string connections = PropertyOr(scope, "fs.s3a.connection.maximum", "96");
  finding.evidence.push_back(Setting("fs.s3a.committer.name", committer));
  finding.evidence.push_back(Setting("spark.sql.sources.commitProtocolClass", protocol));
  finding.evidence.push_back(Setting("mapreduce.fileoutputcommitter.algorithm.version", algorithm));
  finding.evidence.push_back(Setting("fs.s3a.fast.upload.buffer", buffer));
  finding.evidence.push_back(Setting("fs.s3a.multipart.size", multipart));
  if (committer == "file" || committer.empty()) {
    finding.fix.push_back(
        "if the output is on S3, use an S3A committer instead of renames (now fs.s3a.committer.name=" +
        committer +
        "): spark.hadoop.fs.s3a.committer.name=magic, "
        "spark.hadoop.fs.s3a.committer.magic.enabled=true, "
        "spark.sql.sources.commitProtocolClass=org.apache.spark.internal.io.cloud.PathOutputCommitProtocol, "
        "spark.sql.parquet.output.committer.class="
        "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter (spark-hadoop-cloud module)");
  }
  if (buffer == "disk") {
    finding.fix.push_back(
        "upload from memory, not local disk: spark.hadoop.fs.s3a.fast.upload.buffer=bytebuffer (now disk)");
  }
  finding.fix.push_back("larger parts, more upload threads: spark.hadoop.fs.s3a.multipart.size=128M (now " +
                        multipart + "), spark.hadoop.fs.s3a.threads.max=64 (now " + threads +
                        "), spark.hadoop.fs.s3a.connection.maximum=200 (now " + connections + ")");
  if (committer == "file" && algorithm == "1") {
    finding.fix.push_back(
        "on HDFS-like storage: spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version=2 "
        "commits task output without a second rename pass (now 1)");
  }
  finding.fix.push_back(
      "write fewer, larger files: repartition or coalesce before the write so each task writes "
      "128 MiB-1 GiB");
}

}  // namespace

void S3WriteSlowRule(const DiagnosisScope& scope, std::vector<Finding>& findings) {
  const S3WriteThresholds& t = scope.thresholds->s3_write_slow;
  if (!t.enabled) return;
  const std::optional<ComputeReference> reference = ComputeReferenceOf(scope, t);
  const double target_bytes_per_second = t.min_task_throughput_mib_per_second * static_cast<double>(kMiB);
  for (const listener::StageAttemptRecord* stage : scope.stages) {
    const listener::TaskStatistics& tasks = stage->tasks;
    if (!tasks.WritesOutput()) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms || static_cast<double>(*duration_ms) < t.min_stage_seconds * 1000) continue;
    const double duration_seconds = static_cast<double>(*duration_ms) / 1000.0;
    // Task time other rules explain (shuffle fetch/write, GC) is taken out before comparing.
    const double explained_share = tasks.executor_run_time_ms > 0
                                       ? std::clamp((static_cast<double>(tasks.shuffle_fetch_wait_ms) +
                                                     static_cast<double>(tasks.shuffle_write_time_ns) / 1e6 +
                                                     static_cast<double>(tasks.jvm_gc_time_ms)) /
                                                        static_cast<double>(tasks.executor_run_time_ms),
                                                    0.0, 0.9)
                                       : 0.0;
    const double write_p95_ms =
        static_cast<double>(tasks.successful_durations.Quantile(0.95).value_or(0)) * (1.0 - explained_share);
    const double write_p50_ms =
        static_cast<double>(tasks.successful_durations.Quantile(0.5).value_or(0)) * (1.0 - explained_share);
    const double task_seconds = static_cast<double>(tasks.task_time_ms) / 1000.0 * (1.0 - explained_share);
    const double throughput = task_seconds > 0 ? static_cast<double>(tasks.output_bytes) / task_seconds : 0;

    double impact = 0;
    double ratio = 0;
    const bool slow_tasks = reference && write_p95_ms > 0 &&
                            (ratio = std::min(write_p95_ms / reference->p95_ms,
                                              write_p50_ms / reference->p50_ms)) >= t.min_p95_ratio;
    if (slow_tasks) impact = std::max(impact, duration_seconds * (1.0 - 1.0 / ratio));
    const bool low_throughput =
        tasks.output_bytes >= t.min_output_bytes && task_seconds > 0 && throughput < target_bytes_per_second;
    if (low_throughput)
      impact = std::max(impact, duration_seconds * (1.0 - throughput / target_bytes_per_second));
    if (!slow_tasks && !low_throughput) continue;
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;

    Finding finding =
        NewFinding(kS3WriteSlow, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    finding.title = "output-writing " + StageLabel(*stage) + " took " + Seconds(duration_seconds) + ": " +
                    (slow_tasks ? "task p95 " + Seconds(write_p95_ms / 1000) + " is " + Ratio(ratio) +
                                      " the compute stages' " + Seconds(reference->p95_ms / 1000)
                                : "") +
                    (slow_tasks && low_throughput ? ", " : "") +
                    (low_throughput ? Bytes(throughput) + "/s per task for " +
                                          Bytes(static_cast<double>(tasks.output_bytes))
                                    : "");
    finding.evidence = {Figure("stage_duration_ms", static_cast<double>(*duration_ms), "ms"),
                        Figure("write_task_p95_ms", write_p95_ms, "ms"),
                        Figure("write_task_p50_ms", write_p50_ms, "ms"),
                        Figure("shuffle_and_gc_share_taken_out", explained_share, "share")};
    if (reference) {
      finding.evidence.push_back(Figure("compute_task_p95_ms", reference->p95_ms, "ms"));
      finding.evidence.push_back(Figure("compute_task_p50_ms", reference->p50_ms, "ms"));
      finding.evidence.push_back(
          Crossed("p95_ratio", std::min(write_p95_ms / reference->p95_ms, write_p50_ms / reference->p50_ms),
                  "ratio", t.min_p95_ratio, Comparison::kAtLeast));
    }
    finding.evidence.push_back(Figure("output_bytes", static_cast<double>(tasks.output_bytes), "bytes"));
    finding.evidence.push_back(
        Crossed("throughput_per_task", throughput, "bytes/s", target_bytes_per_second, Comparison::kAtMost));
    AddCommitterFixes(scope, finding);
    findings.push_back(std::move(finding));
  }
}

}  // namespace sparktrace::diagnose
