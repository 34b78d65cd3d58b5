#include "cli/tracing_config.h"

#include <array>

#include "common/flag_values.h"
#include "common/units.h"
#include "diagnose/rules_file.h"
#include "listener/rest/spark_ui_endpoint.h"
#include "tracing/otlp/endpoint.h"
#include "tracing/otlp/headers.h"
#include "tracing/sampler.h"

namespace sparktrace::cli {
namespace {

Result<std::optional<OtlpConfig>> OtlpFromFlags(const ParsedFlags& flags) {
  const std::string& endpoint = flags.Get("otlp-endpoint");
  if (endpoint.empty()) {
    for (std::string_view dependent : {"otlp-header", "otlp-tls", "otlp-ca", "otlp-protocol"}) {
      if (flags.IsSet(dependent))
        return InvalidArgument("--" + std::string(dependent) + " needs --otlp-endpoint");
    }
    return std::optional<OtlpConfig>();
  }
  OtlpConfig otlp;
  otlp.endpoint = endpoint;
  const std::string& protocol = flags.Get("otlp-protocol");
  if (protocol == "grpc") {
    otlp.protocol = OtlpProtocol::kGrpc;
    if (auto parsed = tracing::otlp::ParseOtlpGrpcEndpoint(endpoint); !parsed.ok()) {
      return FlagError("otlp-endpoint", parsed.error());
    }
  } else if (protocol == "http") {
    otlp.protocol = OtlpProtocol::kHttp;
    if (auto parsed = tracing::otlp::ParseOtlpHttpEndpoint(endpoint); !parsed.ok()) {
      return FlagError("otlp-endpoint", parsed.error());
    }
  } else {
    return InvalidArgument("--otlp-protocol: '" + protocol + "' is not grpc or http");
  }
  for (const std::string& header : flags.GetAll("otlp-header")) {
    auto parsed = tracing::otlp::ParseOtlpHeader(header);
    if (!parsed.ok()) return FlagError("otlp-header", parsed.error());
    otlp.headers.push_back(std::move(*parsed));
  }
  otlp.ca_file = flags.Get("otlp-ca");
  otlp.tls = flags.GetBool("otlp-tls") || !otlp.ca_file.empty();
  if (otlp.tls && otlp.protocol == OtlpProtocol::kHttp) {
    return InvalidArgument("--otlp-tls: OTLP/HTTP is plain HTTP only; use --otlp-protocol grpc for TLS");
  }
  return std::optional<OtlpConfig>(std::move(otlp));
}

}  // namespace

std::span<const FlagSpec> TracingFlagSpecs() {
  static const std::array<FlagSpec, 26> kSpecs = {{
      {"store", "PATH|URL", "sparktrace.db",
       "the trace store: a SQLite file, or postgresql://USER@HOST:PORT/DB?sslmode=… shared by every proxy "
       "(password from PGPASSWORD or PGPASSFILE); 'none' turns it off; read it with `sparktrace traces`"},
      {"store-max-age", "DURATION", "7d", "delete stored traces older than this"},
      {"store-max-bytes", "BYTES", "1GiB", "delete the oldest stored traces beyond this size"},
      {"spool-dir", "DIR", "",
       "where spans wait on disk while the store is slow or down (default: STORE.spool beside a SQLite file, "
       "./sparktrace-spool for PostgreSQL; 'none': drop and count them)"},
      {"spool-max-bytes", "BYTES", "1GiB",
       "the spool's bound; beyond it spans are dropped (counted as spool_full)"},
      {"otlp-endpoint", "ENDPOINT", "",
       "export spans over OTLP: gRPC host:4317, or HTTP host:4318 / http://host:4318/v1/traces"},
      {"otlp-protocol", "PROTOCOL", "grpc", "grpc or http (protobuf bodies)"},
      {"otlp-header", "KEY=VALUE", "", "header sent with every export (repeatable; values are never logged)",
       false, true},
      {"otlp-tls", "", "", "OTLP/gRPC over TLS"},
      {"otlp-ca", "FILE", "", "PEM roots for --otlp-tls (implies it; default: system roots)"},
      {"sample-ratio", "RATIO", "1",
       "0..1: share of traces started here that are recorded (client traceparents decide their own)"},
      {"span-batch-delay", "DURATION", "1s",
       "longest a finished span waits before it is written or exported"},
      {"span-queue-max", "N", "16384",
       "finished spans waiting for each sink (the store, OTLP), 8192..4194304; beyond it spans are dropped "
       "(counted as queue_full)"},
      {"operation-linger", "DURATION", "30s",
       "how long an operation waits for a reattach or release before it ends"},
      {"progress-event-interval", "DURATION", "1s",
       "Spark 4 execution_progress: at most one spark.connect.progress event per operation this often "
       "(the first and the last always kept)"},
      {"progress-max-events", "N", "32",
       "at most this many spark.connect.progress events per operation span (2..1000; the rest are counted)"},
      {"progress-snapshot-interval", "DURATION", "2s",
       "while Spark 4 reports progress, a running operation's span is written to the store (never to OTLP) "
       "at most this often, for the trace view"},
      {"no-tracing", "", "",
       "record nothing and forward traceparent untouched (same as --store none without --otlp-endpoint)"},
      {"event-log-dir", "DIR", "",
       "the driver's spark.eventLog.dir (shared volume): jobs, stages and phases under each operation "
       "(repeatable)",
       false, true},
      {"event-log-poll", "DURATION", "1s",
       "how often --event-log-dir (and --spark-ui) is read for new events"},
      {"spark-ui", "URL", "",
       "the driver's UI (http://driver:4040): its REST API, when the event logs are not shared"},
      {"event-push-max-bytes", "BYTES", "16MiB",
       "largest body POST /api/v1/events takes on the admin port (SparkListener JSON lines); 0 turns "
       "the endpoint off"},
      {"event-push-without-token", "", "",
       "with --admin-token, still take POST /api/v1/events without it (a shipper that cannot send an "
       "Authorization header; keep the admin port's NetworkPolicy narrow)"},
      {"sql-plan-max-bytes", "BYTES", "2MiB",
       "largest plan a spark.sql.execution span carries for the trace view (spark.sql.plan); past it "
       "the operators' metric lists are dropped, then operators; 0 leaves the plan off"},
      {"max-reported-attempts", "N", "50000",
       "task attempts whose Airflow reports are remembered, so that a report that would rewrite another "
       "attempt's span or its own attempt's first report is refused (409); past it the least recently "
       "reported is forgotten"},
      {"rules", "FILE", "",
       "diagnosis rule thresholds (YAML or JSON) over the defaults, for the findings on driver spans "
       "(docs/diagnose-rules.md)"},
  }};
  return kSpecs;
}

Result<TracingConfig> TracingConfigFromFlags(const ParsedFlags& flags) {
  TracingConfig config;
  const std::string& store = flags.Get("store");
  if (store.empty()) return InvalidArgument("--store: empty path (use 'none' to turn the store off)");
  if (store == "none") {
    config.store.reset();
  } else {
    auto location = tracing::store::ParseStoreLocation(store);
    if (!location.ok()) return FlagError("store", location.error());
    config.store = std::move(*location);
  }
  auto max_age = DurationFlag(flags, "store-max-age");
  if (!max_age.ok()) return max_age.error();
  if (max_age->count() == 0) return InvalidArgument("--store-max-age: must be more than 0");
  config.store_max_age = *max_age;
  auto max_bytes = ParseByteSize(flags.Get("store-max-bytes"));
  if (!max_bytes.ok()) return FlagError("store-max-bytes", max_bytes.error());
  if (*max_bytes < (1U << 20)) return InvalidArgument("--store-max-bytes: at least 1MiB");
  config.store_max_bytes = *max_bytes;
  if (flags.Get("spool-dir") == "none") {
    config.spool_dir.reset();
  } else {
    config.spool_dir = flags.Get("spool-dir");
  }
  auto spool_bytes = ParseByteSize(flags.Get("spool-max-bytes"));
  if (!spool_bytes.ok()) return FlagError("spool-max-bytes", spool_bytes.error());
  if (*spool_bytes < (1U << 20)) return InvalidArgument("--spool-max-bytes: at least 1MiB");
  config.spool_max_bytes = *spool_bytes;

  auto otlp = OtlpFromFlags(flags);
  if (!otlp.ok()) return otlp.error();
  config.otlp = std::move(*otlp);

  auto ratio = tracing::ParseSampleRatio(flags.Get("sample-ratio"));
  if (!ratio.ok()) return FlagError("sample-ratio", ratio.error());
  config.sample_ratio = *ratio;
  auto batch_delay = DurationFlag(flags, "span-batch-delay");
  if (!batch_delay.ok()) return batch_delay.error();
  if (batch_delay->count() == 0) return InvalidArgument("--span-batch-delay: must be more than 0");
  config.span_batch_delay = *batch_delay;
  // At least four of the store's batches: a quarter of the queue is where its exporter starts
  // spooling (tracing/store/export/store_span_exporter.h).
  auto queue_max = IntegerFlag(flags, "span-queue-max", 8192, 4 << 20);
  if (!queue_max.ok()) return queue_max.error();
  config.span_queue_max = static_cast<std::size_t>(*queue_max);
  auto linger = DurationFlag(flags, "operation-linger");
  if (!linger.ok()) return linger.error();
  config.operation_linger = *linger;
  auto event_interval = DurationFlag(flags, "progress-event-interval");
  if (!event_interval.ok()) return event_interval.error();
  config.progress.event_interval = *event_interval;
  auto max_events = IntegerFlag(flags, "progress-max-events", 2, 1000);
  if (!max_events.ok()) return max_events.error();
  config.progress.max_events = static_cast<std::size_t>(*max_events);
  auto snapshot_interval = DurationFlag(flags, "progress-snapshot-interval");
  if (!snapshot_interval.ok()) return snapshot_interval.error();
  // Each snapshot is a store write: no faster than the store's own batching allows for.
  if (*snapshot_interval < std::chrono::milliseconds(100))
    return InvalidArgument("--progress-snapshot-interval: at least 100ms");
  config.progress.snapshot_interval = *snapshot_interval;

  for (const std::string& dir : flags.GetAll("event-log-dir")) {
    if (dir.empty()) return InvalidArgument("--event-log-dir: empty path");
    config.event_log_dirs.push_back(dir);
  }
  config.spark_ui_url = flags.Get("spark-ui");
  if (!config.spark_ui_url.empty()) {
    if (auto endpoint = listener::rest::ParseSparkUiUrl(config.spark_ui_url); !endpoint.ok()) {
      return FlagError("spark-ui", endpoint.error());
    }
  }
  auto push_max = ParseByteSize(flags.Get("event-push-max-bytes"));
  if (!push_max.ok()) return FlagError("event-push-max-bytes", push_max.error());
  if (*push_max > (std::uint64_t{1} << 30)) return InvalidArgument("--event-push-max-bytes: at most 1GiB");
  config.event_push_max_bytes = *push_max;
  config.event_push_needs_token = !flags.GetBool("event-push-without-token");
  auto plan_max = ParseByteSize(flags.Get("sql-plan-max-bytes"));
  if (!plan_max.ok()) return FlagError("sql-plan-max-bytes", plan_max.error());
  if (*plan_max > (std::uint64_t{64} << 20)) return InvalidArgument("--sql-plan-max-bytes: at most 64MiB");
  config.sql_plan_max_bytes = *plan_max;
  auto reported = IntegerFlag(flags, "max-reported-attempts", 1, 10'000'000);
  if (!reported.ok()) return reported.error();
  config.max_reported_attempts = static_cast<std::size_t>(*reported);
  auto poll = DurationFlag(flags, "event-log-poll");
  if (!poll.ok()) return poll.error();
  if (poll->count() == 0) return InvalidArgument("--event-log-poll: must be more than 0");
  config.event_log_poll = *poll;

  if (flags.IsSet("rules")) {
    auto rules = sparktrace::diagnose::LoadRulesFile(flags.Get("rules"));
    if (!rules.ok()) return FlagError("rules", rules.error());
    config.rules = rules->thresholds;
    config.suppressions = std::move(rules->suppressions);
    config.prices = rules->prices;
  }

  if (flags.GetBool("no-tracing")) {
    config.store.reset();
    config.otlp.reset();
  }
  return config;
}

}  // namespace sparktrace::cli
