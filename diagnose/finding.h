#pragma once
// Finding: one problem the diagnosis rules (diagnose.h) found in a Spark application or in one Spark
// Connect operation, with what it is (a stable id), how bad (severity), where (scope), why (the
// evidence: figures and the thresholds they crossed), what it cost (impact_seconds of wall time),
// what to do (fix: config keys with suggested values) and where to read more (recipe).
//
// Plain values; no threading concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sparktrace::diagnose {

// The rule ids: stable, part of the JSON schema and of metric labels (bounded: these fifteen).
inline constexpr std::string_view kResourceWaitLong = "resource-wait-long";
inline constexpr std::string_view kS3WriteSlow = "s3-write-slow";
inline constexpr std::string_view kDataSkew = "data-skew";
inline constexpr std::string_view kOomAndSpill = "oom-and-spill";
inline constexpr std::string_view kShuffleBottleneck = "shuffle-bottleneck";
inline constexpr std::string_view kLowParallelism = "low-parallelism";
inline constexpr std::string_view kGcPressure = "gc-pressure";
inline constexpr std::string_view kIdleExecutors = "idle-executors";
inline constexpr std::string_view kTaskFailures = "task-failures";
inline constexpr std::string_view kSlowSparkJobs = "slow-spark-jobs";
// The plan rules: about one operator of a SQL execution's final physical plan (rules/plan_*.cc).
inline constexpr std::string_view kExplodingJoin = "exploding-join";
inline constexpr std::string_view kNestedLoopJoin = "nested-loop-join";
inline constexpr std::string_view kScanDiscardsMost = "scan-discards-most";
inline constexpr std::string_view kBroadcastNearLimit = "broadcast-near-limit";
inline constexpr std::string_view kOperatorSpill = "operator-spill";

// The recipe (troubleshooting doc) of a rule id, relative to the repository root.
std::string_view RecipeFor(std::string_view id);

enum class Severity : std::uint8_t { kInfo = 0, kWarning = 1, kCritical = 2 };
std::string_view SeverityName(Severity severity);  // "info", "warning", "critical"

// kSqlOperator: one operator (plan node) of one SQL execution, within the application or operation.
enum class ScopeKind : std::uint8_t { kApplication, kOperation, kJob, kStage, kSqlOperator };
// "application", "operation", "job", "stage", "sql-operator"
std::string_view ScopeKindName(ScopeKind kind);

struct FindingScope {
  ScopeKind kind = ScopeKind::kApplication;
  std::string app_id;
  std::optional<std::string> operation_id;  // set for findings of DiagnoseOperation
  std::optional<std::int32_t> job_id;
  std::optional<std::int32_t> stage_id;
  std::optional<std::int32_t> stage_attempt;
  std::string stage_name;  // "save at Job.scala:42"; empty when unknown or not a stage
  // For kSqlOperator: the SQL execution, and the operator's node id (its index in the plan as
  // diagnose --json's sql_executions lists it, pre-order from 0) and node name.
  std::optional<std::int64_t> sql_execution_id;
  std::optional<std::uint32_t> plan_node_id;
  std::string plan_node_name;
};

// How a figure compared with its threshold for the finding to fire.
enum class Comparison : std::uint8_t { kNone, kAtLeast, kAtMost };
std::string_view ComparisonSymbol(Comparison comparison);  // "", ">=", "<="

struct Evidence {
  std::string name;                 // "max_task_ms", "gc_share", "fs.s3a.committer.name"
  double value = 0;                 // the figure (ignored when `text` is set)
  std::optional<std::string> text;  // a textual observation instead (a configuration value)
  std::string unit;                 // "ms", "bytes", "share" (0..1), "ratio", "count", "bytes/s", "" for text
  std::optional<double> threshold;
  Comparison comparison = Comparison::kNone;
};

// A link between findings that share a cause (skew → spill → GC → OOM on one stage).
struct RelatedFinding {
  std::string key;       // the other finding's Key()
  std::string relation;  // "caused-by", "causes", "same-cause", "summarises"
};

// Set on a finding a rules file's suppression (suppression.h) matched: still shown, not counted.
struct FindingSuppression {
  std::string reason;
  std::string until;  // "2026-11-01": the last day (UTC) it applies
};

struct Finding {
  std::string id;  // one of the rule ids above
  Severity severity = Severity::kWarning;
  FindingScope scope;
  std::string title;  // one line saying what was found, with the main figures
  std::vector<Evidence> evidence;
  double impact_seconds = 0;     // estimated wall time it cost (each rule's .cc explains its estimate)
  std::vector<std::string> fix;  // concrete actions, with config keys and suggested values
  std::string recipe;            // RecipeFor(id)
  std::vector<RelatedFinding> related;
  std::optional<FindingSuppression> suppressed;

  // Unique within one diagnosis: "data-skew@stage:3.0", "gc-pressure@application",
  // "task-failures@operation:<id>", "data-skew@job:5", "operator-spill@sql:3/node:12", the last
  // prefixed with "operation:<id>/" for an operation's findings.
  std::string Key() const;
};

}  // namespace sparktrace::diagnose
