// The proxy's tracing flags (docs/tracing.md, "Where spans go"): defaults, what turns tracing off,
// and that every rejected value names its flag (main prints the message and exits 2).
#include "cli/tracing_config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace sparktrace::cli {
namespace {

Result<TracingConfig> Configure(std::vector<std::string> args) {
  auto flags = ParseFlags(TracingFlagSpecs(), args, [](const std::string&) { return std::nullopt; });
  if (!flags.ok()) return flags.error();
  return TracingConfigFromFlags(*flags);
}

std::string MessageOf(const Result<TracingConfig>& result) {
  return result.ok() ? "" : result.error().message;
}

std::size_t Occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

TEST(TracingConfig, DefaultsMatchTheDocumentedOnes) {
  auto config = Configure({});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  ASSERT_TRUE(config->store.has_value());
  EXPECT_EQ(config->store->target, "sparktrace.db");
  EXPECT_EQ(config->store_max_age, std::chrono::hours(7 * 24));
  EXPECT_EQ(config->store_max_bytes, std::uint64_t{1} << 30);
  EXPECT_FALSE(config->otlp.has_value());
  EXPECT_EQ(config->sample_ratio, 1.0);
  EXPECT_EQ(config->span_batch_delay, std::chrono::seconds(1));
  EXPECT_EQ(config->operation_linger, std::chrono::seconds(30));
  EXPECT_EQ(config->progress.event_interval, std::chrono::seconds(1));
  EXPECT_EQ(config->progress.max_events, 32u);
  EXPECT_EQ(config->progress.snapshot_interval, std::chrono::seconds(2));
  EXPECT_TRUE(config->enabled());
}

TEST(TracingConfig, ProgressFlagsAreParsed) {
  auto config = Configure({"--progress-event-interval", "250ms", "--progress-max-events", "2",
                           "--progress-snapshot-interval", "100ms"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_EQ(config->progress.event_interval, std::chrono::milliseconds(250));
  EXPECT_EQ(config->progress.max_events, 2u);
  EXPECT_EQ(config->progress.snapshot_interval, std::chrono::milliseconds(100));
}

TEST(TracingConfig, EveryBadValueNamesItsFlag) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--otlp-protocol", {"--otlp-endpoint", "collector:4317", "--otlp-protocol", "thrift"}},
      {"--otlp-protocol", {"--otlp-protocol", "http"}},  // needs an endpoint
      {"--otlp-header", {"--otlp-header", "authorization=Bearer abc"}},
      {"--otlp-tls", {"--otlp-tls"}},
      {"--otlp-ca", {"--otlp-ca", "/etc/ssl/ca.pem"}},
      {"--otlp-header", {"--otlp-endpoint", "collector:4317", "--otlp-header", "no-equals-sign"}},
      {"--otlp-header", {"--otlp-endpoint", "collector:4317", "--otlp-header", "=value"}},
      {"--otlp-endpoint", {"--otlp-endpoint", "collector"}},
      {"--otlp-endpoint", {"--otlp-endpoint", "http://collector:4317"}},  // gRPC takes host:port
      {"--otlp-endpoint", {"--otlp-endpoint", "collector:70000"}},
      {"--otlp-endpoint", {"--otlp-protocol", "http", "--otlp-endpoint", "https://collector:4318"}},
      {"--otlp-tls", {"--otlp-protocol", "http", "--otlp-endpoint", "collector:4318", "--otlp-tls"}},
      {"--sample-ratio", {"--sample-ratio", "2"}},
      {"--sample-ratio", {"--sample-ratio", "-0.1"}},
      {"--sample-ratio", {"--sample-ratio", "half"}},
      {"--sample-ratio", {"--sample-ratio", "nan"}},
      {"--store", {"--store", ""}},
      {"--store-max-age", {"--store-max-age", "week"}},
      {"--store-max-age", {"--store-max-age", "0"}},
      {"--store-max-bytes", {"--store-max-bytes", "lots"}},
      {"--store-max-bytes", {"--store-max-bytes", "1KiB"}},
      {"--span-batch-delay", {"--span-batch-delay", "0"}},
      {"--span-batch-delay", {"--span-batch-delay", "5"}},
      {"--span-queue-max", {"--span-queue-max", "4096"}},
      {"--span-queue-max", {"--span-queue-max", "many"}},
      {"--operation-linger", {"--operation-linger", "soon"}},
      {"--progress-event-interval", {"--progress-event-interval", "often"}},
      {"--progress-max-events", {"--progress-max-events", "1"}},
      {"--progress-max-events", {"--progress-max-events", "1001"}},
      {"--progress-snapshot-interval", {"--progress-snapshot-interval", "50ms"}},
  };
  for (const auto& [flag, args] : cases) {
    auto config = Configure(args);
    ASSERT_FALSE(config.ok()) << flag << " accepted";
    EXPECT_NE(config.error().message.find(flag), std::string::npos) << config.error().message;
    EXPECT_EQ(config.error().code, ErrorCode::kInvalidArgument) << config.error().message;
  }
}

// The message is printed as is: "--sample-ratio: --sample-ratio: 2 is outside [0, 1]" reads as a
// stutter. Each flag should be named once.
TEST(TracingConfig, ErrorsNameTheFlagOnce) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"--sample-ratio", {"--sample-ratio", "2"}},
      {"--sample-ratio", {"--sample-ratio", "half"}},
      {"--otlp-header", {"--otlp-endpoint", "collector:4317", "--otlp-header", "no-equals-sign"}},
      {"--otlp-protocol", {"--otlp-endpoint", "collector:4317", "--otlp-protocol", "thrift"}},
      {"--store-max-age", {"--store-max-age", "week"}},
  };
  for (const auto& [flag, args] : cases) {
    auto config = Configure(args);
    ASSERT_FALSE(config.ok()) << flag;
    EXPECT_EQ(Occurrences(config.error().message, flag), 1u) << config.error().message;
  }
}

TEST(TracingConfig, HeaderErrorsNeverShowTheValue) {
  // Header values are secrets (API keys); only the key may appear in a message.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"--otlp-header", "authorization=Bearer s3cr3t-token"},
           {"--otlp-endpoint", "collector:4317", "--otlp-header", "=s3cr3t-token"},
           {"--otlp-endpoint", "collector", "--otlp-header", "authorization=s3cr3t-token"}}) {
    auto config = Configure(args);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.error().message.find("s3cr3t-token"), std::string::npos) << config.error().message;
  }
}

// --rules: the diagnosis thresholds of the findings on driver spans, read once at start.
TEST(TracingConfig, RulesFileSetsTheDiagnosisThresholds) {
  EXPECT_DOUBLE_EQ(Configure({})->rules.slow_spark_jobs.min_impact_seconds,
                   diagnose::RuleThresholds{}.slow_spark_jobs.min_impact_seconds);
  const std::string path = ::testing::TempDir() + "/tracing_config_rules.yaml";
  {
    std::ofstream file(path);
    file << "slow-spark-jobs:\n  min_impact_seconds: 42\n";
  }
  auto config = Configure({"--rules", path});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_DOUBLE_EQ(config->rules.slow_spark_jobs.min_impact_seconds, 42);

  {
    std::ofstream file(path);
    file << "slow-spark-jobs:\n  no_such_key: 1\n";
  }
  auto bad = Configure({"--rules", path});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("--rules"), std::string::npos) << bad.error().message;
  EXPECT_NE(bad.error().message.find("no_such_key"), std::string::npos) << bad.error().message;
  std::remove(path.c_str());

  auto missing = Configure({"--rules", path});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("--rules"), std::string::npos) << missing.error().message;
}

TEST(TracingConfig, StoreNoneWithoutOtlpTurnsTracingOff) {
  auto config = Configure({"--store", "none"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_FALSE(config->store.has_value());
  EXPECT_FALSE(config->otlp.has_value());
  EXPECT_FALSE(config->enabled());
}

TEST(TracingConfig, StoreNoneWithOtlpStillTraces) {
  auto config = Configure({"--store", "none", "--otlp-endpoint", "collector:4317"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_FALSE(config->store.has_value());
  ASSERT_TRUE(config->otlp.has_value());
  EXPECT_TRUE(config->enabled());
}

TEST(TracingConfig, NoTracingTurnsOffTheStoreAndOtlp) {
  auto config = Configure({"--no-tracing", "--store", "/var/lib/sparktrace/traces.db", "--otlp-endpoint",
                           "collector:4317", "--otlp-header", "authorization=Bearer abc"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  EXPECT_FALSE(config->store.has_value());
  EXPECT_FALSE(config->otlp.has_value());
  EXPECT_FALSE(config->enabled());
}

TEST(TracingConfig, OtlpGrpcWithHeadersAndCa) {
  auto config = Configure({"--otlp-endpoint", "collector.observability:4317", "--otlp-header",
                           "Authorization=Bearer abc=def", "--otlp-header", "x-tenant=7", "--otlp-ca",
                           "/etc/ssl/collector-ca.pem"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  ASSERT_TRUE(config->otlp.has_value());
  EXPECT_EQ(config->otlp->endpoint, "collector.observability:4317");
  EXPECT_EQ(config->otlp->protocol, OtlpProtocol::kGrpc);
  const std::vector<std::pair<std::string, std::string>> headers = {{"authorization", "Bearer abc=def"},
                                                                    {"x-tenant", "7"}};
  EXPECT_EQ(config->otlp->headers, headers);
  EXPECT_TRUE(config->otlp->tls) << "--otlp-ca implies --otlp-tls";
  EXPECT_EQ(config->otlp->ca_file, "/etc/ssl/collector-ca.pem");
}

TEST(TracingConfig, OtlpHttpTakesHostPortOrUrl) {
  for (const char* endpoint : {"tempo:4318", "http://tempo:4318/v1/traces"}) {
    auto config = Configure({"--otlp-protocol", "http", "--otlp-endpoint", endpoint});
    ASSERT_TRUE(config.ok()) << endpoint << ": " << MessageOf(config);
    ASSERT_TRUE(config->otlp.has_value());
    EXPECT_EQ(config->otlp->protocol, OtlpProtocol::kHttp);
    EXPECT_EQ(config->otlp->endpoint, endpoint);
    EXPECT_FALSE(config->otlp->tls);
  }
}

TEST(TracingConfig, ValuesAreParsed) {
  auto config =
      Configure({"--store", "/data/traces.db", "--store-max-age", "36h", "--store-max-bytes", "2GiB",
                 "--sample-ratio", "0.25", "--span-batch-delay", "250ms", "--span-queue-max", "65536",
                 "--operation-linger", "2m", "--otlp-endpoint", "[::1]:4317", "--otlp-tls"});
  ASSERT_TRUE(config.ok()) << MessageOf(config);
  ASSERT_TRUE(config->store.has_value());
  EXPECT_EQ(config->store->target, "/data/traces.db");
  EXPECT_EQ(config->store_max_age, std::chrono::hours(36));
  EXPECT_EQ(config->store_max_bytes, std::uint64_t{2} << 30);
  EXPECT_EQ(config->sample_ratio, 0.25);
  EXPECT_EQ(config->span_batch_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(config->span_queue_max, 65536u);
  EXPECT_EQ(config->operation_linger, std::chrono::minutes(2));
  ASSERT_TRUE(config->otlp.has_value());
  EXPECT_TRUE(config->otlp->tls);
}

TEST(TracingConfig, SampleRatioBoundsAreIncluded) {
  for (const auto& [text, ratio] : std::map<std::string, double>{{"0", 0.0}, {"1", 1.0}, {"1e-3", 0.001}}) {
    auto config = Configure({"--sample-ratio", text});
    ASSERT_TRUE(config.ok()) << text << ": " << MessageOf(config);
    EXPECT_EQ(config->sample_ratio, ratio) << text;
  }
}

TEST(TracingConfig, OtlpHeaderIsRepeatable) {
  const auto specs = TracingFlagSpecs();
  bool found = false;
  for (const FlagSpec& spec : specs) {
    if (spec.name != "otlp-header") continue;
    found = true;
    EXPECT_TRUE(spec.repeatable);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace sparktrace::cli
