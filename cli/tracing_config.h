#pragma once
// The proxy's tracing flags (docs/tracing.md, "Where spans go") and their validation into an
// immutable TracingConfig. Errors name the flag, for exit status 2.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/flags.h"
#include "common/result.h"
#include "diagnose/rule_thresholds.h"
#include "diagnose/rules_file.h"
#include "diagnose/suppression.h"
#include "tracing/airflow_report_ledger.h"
#include "tracing/connect/operation_progress.h"
#include "tracing/span_pipeline.h"
#include "tracing/store/store_location.h"

namespace sparktrace::cli {

enum class OtlpProtocol { kGrpc, kHttp };

struct OtlpConfig {
  std::string endpoint;
  OtlpProtocol protocol = OtlpProtocol::kGrpc;
  std::vector<std::pair<std::string, std::string>> headers;
  bool tls = false;
  std::string ca_file;
};

struct TracingConfig {
  // nullopt: --store none
  std::optional<tracing::store::StoreLocation> store =
      tracing::store::StoreLocation{tracing::store::StoreBackend::kSqlite, "sparktrace.db", "sparktrace.db"};
  std::chrono::milliseconds store_max_age{7LL * 24 * 3600 * 1000};
  std::uint64_t store_max_bytes = std::uint64_t{1} << 30;
  // Where spans wait while the store is slow or down: "" beside a SQLite file (PATH.spool), else
  // ./sparktrace-spool; nullopt: --spool-dir none (such spans are dropped and counted).
  std::optional<std::string> spool_dir = "";
  std::uint64_t spool_max_bytes = std::uint64_t{1} << 30;
  std::optional<OtlpConfig> otlp;
  double sample_ratio = 1.0;
  std::chrono::milliseconds span_batch_delay{1000};
  std::size_t span_queue_max = tracing::SpanPipelineOptions{}.max_queue_spans;  // per pipeline
  std::chrono::milliseconds operation_linger{30'000};
  // Spark 4's execution_progress: events kept per operation and live snapshots for the store.
  tracing::connect::ProgressOptions progress;
  std::vector<std::string> event_log_dirs;  // the driver's spark.eventLog.dir, shared with the proxy
  std::chrono::milliseconds event_log_poll{1000};
  std::string spark_ui_url;  // the driver's REST API, when the event logs are not shared
  // POST /api/v1/events on the admin port: the largest body taken; 0 turns the endpoint off.
  std::uint64_t event_push_max_bytes = std::uint64_t{16} << 20;
  // Whether, with --admin-token, an event push must carry the token: pushed events reach the traces of
  // the operations their job tags name, so an open route lets any pod write into another task's trace.
  bool event_push_needs_token = true;
  // The spark.sql.execution span's plan attribute (spark.sql.plan): its largest size.
  std::uint64_t sql_plan_max_bytes = std::uint64_t{2} << 20;
  // Task attempts whose reports POST /api/v1/airflow/task-attempts remembers (tracing/airflow_report_ledger.h).
  std::size_t max_reported_attempts = tracing::kDefaultMaxReportedAttempts;
  // Thresholds of the diagnosis rules whose findings go on the driver's spans (--rules).
  sparktrace::diagnose::RuleThresholds rules;
  // The same file's suppressions of findings (expired ones included: the feed logs and ignores them).
  std::vector<sparktrace::diagnose::Suppression> suppressions;
  // The same file's prices (its `cost` section); the --cost-* flags win over them.
  sparktrace::diagnose::RulesPrices prices;

  bool enabled() const { return store.has_value() || otlp.has_value(); }
};

std::span<const FlagSpec> TracingFlagSpecs();
Result<TracingConfig> TracingConfigFromFlags(const ParsedFlags& flags);

}  // namespace sparktrace::cli
