// s3-write-slow: an output-writing stage that writes slowly for the bytes it writes, compared with
// what this job's compute does per task-second. Points at the output committer and the upload path
// (S3A settings), whatever the storage.
//
// A write stage's tasks also read (shuffle or input) and compute before they write, and stages
// differ in shape (a short-task shuffle stage next to a long-task scan), so task durations are not
// compared across stages. Bytes per task-second are:
//   * compute rate: bytes the scope's non-writing stages read (input + shuffle read) per second of
//     their task time, pooled over all of them (time-weighted by construction), after taking out
//     their shuffle-wait and GC time; stages shorter than min_compute_stage_seconds do not count,
//     and the pool needs min_compute_tasks successful tasks and min_compute_read_bytes read;
//   * write time: the write stage's task time, less its shuffle and GC time (shuffle-bottleneck and
//     gc-pressure explain those) and less the time its own reads take at the compute rate (without
//     a compute reference, all of it: the floor then judges the stage's whole I/O);
//     When the tasks' CPU time is known, at most their off-CPU time (less shuffle waits and GC): a
//     task blocked on its uploads is off the CPU, one encoding and compressing is on it;
//   * write rate: its output bytes per second of write time.
// Fires for a writing stage of at least min_stage_seconds that wrote ≥ min_output_bytes when the
// write rate is below the limit: compute rate / min_compute_to_write_ratio, capped at
// max_judged_write_mib_per_second (a write that fast is never slow) and never below
// min_task_throughput_mib_per_second (a write that slow always is; also the limit without a compute
// reference). Impact: the write time above what the limit's rate would take, as a share of the
// stage's duration; it ignores the commit work after the stage (driver side).
#include <algorithm>

#include "diagnose/rules/rules.h"

namespace sparktrace::diagnose::rules {
namespace {

// Task time other rules explain (shuffle fetch wait and write, GC), as a share of run time.
double ExplainedShare(const listener::correlate::TaskStatistics& tasks) {
  if (tasks.executor_run_time_ms <= 0) return 0.0;
  const double explained = static_cast<double>(tasks.shuffle_fetch_wait_ms) +
                           static_cast<double>(tasks.shuffle_write_time_ns) / 1e6 +
                           static_cast<double>(tasks.jvm_gc_time_ms);
  return std::clamp(explained / static_cast<double>(tasks.executor_run_time_ms), 0.0, 0.9);
}

double ReadBytes(const listener::correlate::TaskStatistics& tasks) {
  return static_cast<double>(tasks.input_bytes) + static_cast<double>(tasks.shuffle_read_bytes);
}

struct ComputeReference {
  double bytes_per_second = 0;  // read per second of (unexplained) task time
  std::int64_t stages = 0;
  std::int64_t tasks = 0;
};

std::optional<ComputeReference> ComputeReferenceOf(const DiagnosisScope& scope, const S3WriteThresholds& t) {
  double bytes = 0;
  double seconds = 0;
  ComputeReference reference;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    if (tasks.WritesOutput() || tasks.successful_durations.count() < 1) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms || static_cast<double>(*duration_ms) < t.min_compute_stage_seconds * 1000) continue;
    bytes += ReadBytes(tasks);
    seconds += static_cast<double>(tasks.task_time_ms) / 1000.0 * (1.0 - ExplainedShare(tasks));
    ++reference.stages;
    reference.tasks += tasks.successful_durations.count();
  }
  if (reference.tasks < t.min_compute_tasks || bytes < static_cast<double>(t.min_compute_read_bytes) ||
      seconds <= 0) {
    return std::nullopt;
  }
  reference.bytes_per_second = bytes / seconds;
  return reference;
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
  const double floor_rate = t.min_task_throughput_mib_per_second * static_cast<double>(kMiB);
  const double ceiling_rate = t.max_judged_write_mib_per_second * static_cast<double>(kMiB);
  const double limit_rate =
      reference ? std::max(floor_rate,
                           std::min(reference->bytes_per_second / t.min_compute_to_write_ratio, ceiling_rate))
                : floor_rate;
  for (const listener::correlate::StageAttemptRecord* stage : scope.stages) {
    const listener::correlate::TaskStatistics& tasks = stage->tasks;
    if (!tasks.WritesOutput() || tasks.output_bytes < t.min_output_bytes) continue;
    const std::optional<std::int64_t> duration_ms = StageDurationMs(*stage);
    if (!duration_ms || static_cast<double>(*duration_ms) < t.min_stage_seconds * 1000) continue;
    const double duration_seconds = static_cast<double>(*duration_ms) / 1000.0;
    const double explained_share = ExplainedShare(tasks);
    const double task_seconds = static_cast<double>(tasks.task_time_ms) / 1000.0 * (1.0 - explained_share);
    const double read_seconds = reference ? ReadBytes(tasks) / reference->bytes_per_second : 0.0;
    double write_seconds = task_seconds - read_seconds;
    // A task waiting on its storage is off the CPU (S3A uploads from other threads, and the task
    // blocks when they fall behind); one that encodes and compresses is on it. When the CPU time is
    // known, only off-CPU time (less shuffle waits and GC) can be a slow write path.
    std::optional<double> off_cpu_seconds;
    if (tasks.cpu_time_known) {
      off_cpu_seconds = std::max(
          0.0, (static_cast<double>(tasks.executor_run_time_ms) -
                static_cast<double>(tasks.executor_cpu_time_ns) / 1e6 -
                static_cast<double>(tasks.jvm_gc_time_ms) - static_cast<double>(tasks.shuffle_fetch_wait_ms) -
                static_cast<double>(tasks.shuffle_write_time_ns) / 1e6) /
                   1000.0);
      write_seconds = std::min(write_seconds, *off_cpu_seconds);
    }
    if (task_seconds <= 0 || write_seconds <= 0) continue;  // its reads account for all of its time
    const double output_bytes = static_cast<double>(tasks.output_bytes);
    const double write_rate = output_bytes / write_seconds;
    if (write_rate >= limit_rate) continue;
    // At the limit's rate the writes would take output / limit; the rest of the write time is the
    // excess, spread over the stage's duration as its share of the task time.
    const double write_share = write_seconds / task_seconds;
    const double impact = duration_seconds * write_share * (1.0 - write_rate / limit_rate);
    if (!PassesImpactGate(scope, impact, t.min_impact_seconds, t.min_impact_share)) continue;

    Finding finding =
        NewFinding(kS3WriteSlow, StageScope(scope, *stage), impact, SeverityForImpact(scope, impact));
    finding.title = "output-writing " + StageLabel(*stage) + " took " + Seconds(duration_seconds) +
                    ": its tasks wrote " + Bytes(output_bytes) + " at " + Bytes(write_rate) +
                    "/s per task-second of writing, " +
                    (reference ? "where this job's compute reads " + Bytes(reference->bytes_per_second) +
                                     "/s per task-second (limit " + Bytes(limit_rate) + "/s)"
                               : "under the " + Bytes(limit_rate) + "/s floor");
    finding.evidence = {Figure("stage_duration_ms", static_cast<double>(*duration_ms), "ms"),
                        Figure("output_bytes", output_bytes, "bytes"),
                        Figure("read_bytes", ReadBytes(tasks), "bytes"),
                        Figure("task_seconds", task_seconds, "s"),
                        Figure("write_seconds", write_seconds, "s"),
                        Figure("shuffle_and_gc_share_taken_out", explained_share, "share")};
    if (off_cpu_seconds) finding.evidence.push_back(Figure("off_cpu_seconds", *off_cpu_seconds, "s"));
    if (reference) {
      finding.evidence.push_back(Figure("compute_read_rate", reference->bytes_per_second, "bytes/s"));
      finding.evidence.push_back(Figure("compute_stages", static_cast<double>(reference->stages), "stages"));
    }
    finding.evidence.push_back(
        Crossed("write_rate_per_task", write_rate, "bytes/s", limit_rate, Comparison::kAtMost));
    AddCommitterFixes(scope, finding);
    findings.push_back(std::move(finding));
  }
}

}  // namespace sparktrace::diagnose::rules
