#include "sim/eventlog/application_lines.h"

#include <utility>

#include "sim/eventlog/json_line.h"

namespace sparktrace::sim::eventlog {
namespace {

constexpr std::int64_t kDriverPort = 7078;
constexpr std::int64_t kBlockManagerPort = 7079;
constexpr std::int64_t kExecutorStorageMemory = 2'388'236'697;  // 4 GiB heap, default fractions
constexpr std::int64_t kDriverStorageMemory = 1'194'118'348;
const char* const kDriverHost = "10.0.0.5";

using Properties = std::vector<std::pair<std::string, std::string>>;

Properties SparkProperties(const ApplicationIdentity& app, const Scenario& scenario,
                           const ScenarioKnobs& knobs) {
  Properties properties = {
      {"spark.app.id", app.app_id},
      {"spark.app.name", app.app_name},
      {"spark.app.startTime", std::to_string(app.start_ms)},
      {"spark.app.submitTime", std::to_string(app.start_ms - 1800)},
      {"spark.master", "k8s://https://kubernetes.default.svc:443"},
      {"spark.submit.deployMode", "client"},
      {"spark.driver.host", kDriverHost},
      {"spark.driver.port", std::to_string(kDriverPort)},
      {"spark.driver.memory", "4g"},
      {"spark.executor.id", "driver"},
      {"spark.executor.memory", "8g"},
      {"spark.executor.cores", std::to_string(knobs.cores_per_executor)},
      {"spark.executor.instances", std::to_string(knobs.executors)},
      {"spark.dynamicAllocation.enabled", "true"},
      {"spark.dynamicAllocation.shuffleTracking.enabled", "true"},
      {"spark.dynamicAllocation.minExecutors", "0"},
      {"spark.dynamicAllocation.maxExecutors", std::to_string(knobs.executors)},
      {"spark.dynamicAllocation.executorIdleTimeout", "60s"},
      {"spark.kubernetes.namespace", "spark"},
      {"spark.kubernetes.container.image", "apache/spark:" + app.spark_version},
      {"spark.plugins", "org.apache.spark.sql.connect.SparkConnectPlugin"},
      {"spark.connect.grpc.binding.port", "15002"},
      {"spark.eventLog.enabled", "true"},
      {"spark.eventLog.dir", "s3a://spark-logs/events"},
      {"spark.sql.adaptive.enabled", "true"},
      {"spark.sql.adaptive.coalescePartitions.enabled", "true"},
      {"spark.sql.adaptive.skewJoin.enabled", "true"},
      {"spark.sql.adaptive.advisoryPartitionSizeInBytes", "64MB"},
      {"spark.sql.shuffle.partitions", "200"},
      {"spark.sql.catalogImplementation", "in-memory"},
      {"spark.serializer", "org.apache.spark.serializer.KryoSerializer"},
      {"spark.scheduler.mode", "FIFO"},
      {"spark.hadoop.fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem"},
      {"spark.hadoop.fs.s3a.aws.credentials.provider",
       "com.amazonaws.auth.WebIdentityTokenCredentialsProvider"},
      {"spark.hadoop.fs.s3a.fast.upload", "true"},
  };
  if (scenario.StrengthOf(Problem::kBroadcastNearLimit) > 0)
    properties.emplace_back("spark.sql.autoBroadcastJoinThreshold", "4g");
  if (scenario.StrengthOf(Problem::kSlowWrites) > 0) {
    // The classic FileOutputCommitter on S3A: every task and the job commit rename objects,
    // which S3 implements as copies.
    properties.emplace_back("spark.hadoop.fs.s3a.committer.name", "file");
    properties.emplace_back("spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version", "1");
    properties.emplace_back("spark.hadoop.fs.s3a.connection.maximum", "15");
    properties.emplace_back("spark.hadoop.fs.s3a.threads.max", "4");
  } else {
    properties.emplace_back("spark.hadoop.fs.s3a.committer.name", "magic");
    properties.emplace_back("spark.hadoop.fs.s3a.committer.magic.enabled", "true");
    properties.emplace_back("spark.sql.sources.commitProtocolClass",
                            "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol");
    properties.emplace_back("spark.sql.parquet.output.committer.class",
                            "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter");
    properties.emplace_back("spark.hadoop.fs.s3a.connection.maximum", "96");
  }
  return properties;
}

Properties HadoopProperties(const Scenario& scenario) {
  const bool slow_writes = scenario.StrengthOf(Problem::kSlowWrites) > 0;
  return {
      {"fs.defaultFS", "file:///"},
      {"fs.s3a.impl", "org.apache.hadoop.fs.s3a.S3AFileSystem"},
      {"fs.s3a.committer.name", slow_writes ? "file" : "magic"},
      {"fs.s3a.committer.magic.enabled", "true"},
      {"fs.s3a.connection.maximum", slow_writes ? "15" : "96"},
      {"fs.s3a.threads.max", slow_writes ? "4" : "64"},
      {"fs.s3a.fast.upload.buffer", "disk"},
      {"fs.s3a.multipart.size", "64M"},
      {"mapreduce.fileoutputcommitter.algorithm.version", slow_writes ? "1" : "2"},
      {"hadoop.tmp.dir", "/tmp/hadoop-spark"},
  };
}

}  // namespace

bool IsSpark4OrLater(const std::string& spark_version) {
  return !spark_version.empty() && spark_version[0] >= '4' && spark_version[0] <= '9';
}

std::string LogStartLine(const ApplicationIdentity& app) {
  return JsonLine()
      .BeginObject()
      .Field("Event", "SparkListenerLogStart")
      .Field("Spark Version", app.spark_version)
      .EndObject()
      .Take();
}

std::string ResourceProfileAddedLine(const ScenarioKnobs& knobs) {
  JsonLine json;
  json.BeginObject().Field("Event", "SparkListenerResourceProfileAdded").Field("Resource Profile Id", 0);
  json.Key("Executor Resource Requests").BeginObject();
  const auto request = [&json](const char* name, std::int64_t amount) {
    json.Key(name).BeginObject().Field("Resource Name", name).Field("Amount", amount);
    json.Field("Discovery Script", "").Field("Vendor", "").EndObject();
  };
  request("cores", knobs.cores_per_executor);
  request("memory", 8192);
  request("offHeap", 0);
  json.EndObject();
  json.Key("Task Resource Requests").BeginObject();
  json.Key("cpus").BeginObject().Field("Resource Name", "cpus").Key("Amount").Double(1.0).EndObject();
  json.EndObject();
  return json.EndObject().Take();
}

std::string DriverBlockManagerAddedLine(const ApplicationIdentity& app) {
  JsonLine json;
  json.BeginObject().Field("Event", "SparkListenerBlockManagerAdded");
  json.Key("Block Manager ID").BeginObject().Field("Executor ID", "driver").Field("Host", kDriverHost);
  json.Field("Port", kBlockManagerPort).EndObject();
  json.Field("Maximum Memory", kDriverStorageMemory).Field("Timestamp", app.start_ms + 620);
  json.Field("Maximum Onheap Memory", kDriverStorageMemory).Field("Maximum Offheap Memory", 0);
  return json.EndObject().Take();
}

std::string EnvironmentUpdateLine(const ApplicationIdentity& app, const Scenario& scenario,
                                  const ScenarioKnobs& knobs) {
  JsonLine json;
  json.BeginObject().Field("Event", "SparkListenerEnvironmentUpdate");
  const bool spark4 = IsSpark4OrLater(app.spark_version);
  json.StringMap("JVM Information",
                 {{"Java Home", "/opt/java/openjdk"},
                  {"Java Version", spark4 ? "17.0.13 (Eclipse Adoptium)" : "11.0.25 (Eclipse Adoptium)"},
                  {"Scala Version", spark4 ? "version 2.13.14" : "version 2.12.18"}});
  json.StringMap("Spark Properties", SparkProperties(app, scenario, knobs));
  json.StringMap("Hadoop Properties", HadoopProperties(scenario));
  json.StringMap("System Properties", {{"java.io.tmpdir", "/tmp"},
                                       {"user.name", app.user},
                                       {"file.encoding", "UTF-8"},
                                       {"sun.java.command",
                                        "org.apache.spark.deploy.SparkSubmit --class "
                                        "org.apache.spark.sql.connect.service.SparkConnectServer"}});
  json.StringMap("Metrics Properties",
                 {{"*.sink.servlet.class", "org.apache.spark.metrics.sink.MetricsServlet"},
                  {"*.sink.servlet.path", "/metrics/json"}});
  json.StringMap("Classpath Entries",
                 {{"/opt/spark/jars/spark-core_2.13-" + app.spark_version + ".jar", "System Classpath"},
                  {"/opt/spark/jars/hadoop-aws-3.4.1.jar", "System Classpath"}});
  return json.EndObject().Take();
}

std::string ApplicationStartLine(const ApplicationIdentity& app) {
  JsonLine json;
  json.BeginObject().Field("Event", "SparkListenerApplicationStart").Field("App Name", app.app_name);
  json.Field("App ID", app.app_id).Field("Timestamp", app.start_ms).Field("User", app.user);
  return json.EndObject().Take();
}

std::string ApplicationEndLine(const ApplicationIdentity& app, EpochMillis end_ms) {
  JsonLine json;
  json.BeginObject().Field("Event", "SparkListenerApplicationEnd").Field("Timestamp", end_ms);
  if (IsSpark4OrLater(app.spark_version)) json.Field("ExitCode", 0);
  return json.EndObject().Take();
}

std::vector<std::string> ExecutorAddedLines(const ExecutorRecord& executor, const TimeMapping& time) {
  const EpochMillis added_ms = time.Time(executor.added_ms);
  JsonLine added;
  added.BeginObject().Field("Event", "SparkListenerExecutorAdded").Field("Timestamp", added_ms);
  added.Field("Executor ID", executor.id).Key("Executor Info").BeginObject();
  added.Field("Host", executor.host).Field("Total Cores", executor.cores);
  added.StringMap("Log Urls", {});
  added.StringMap("Attributes", {});
  added.Key("Resources").BeginObject().EndObject();
  added.Field("Resource Profile Id", 0).Field("Registration Time", added_ms);
  added.Field("Request Time", time.Time(executor.request_ms)).EndObject().EndObject();

  JsonLine block_manager;
  block_manager.BeginObject().Field("Event", "SparkListenerBlockManagerAdded");
  block_manager.Key("Block Manager ID").BeginObject().Field("Executor ID", executor.id);
  block_manager.Field("Host", executor.host).Field("Port", kBlockManagerPort).EndObject();
  block_manager.Field("Maximum Memory", kExecutorStorageMemory).Field("Timestamp", added_ms + 41);
  block_manager.Field("Maximum Onheap Memory", kExecutorStorageMemory).Field("Maximum Offheap Memory", 0);
  return {added.Take(), block_manager.EndObject().Take()};
}

std::vector<std::string> ExecutorRemovedLines(const ExecutorRecord& executor, const TimeMapping& time) {
  const EpochMillis removed_ms = time.Time(executor.removed_ms.value_or(executor.added_ms));
  JsonLine removed;
  removed.BeginObject().Field("Event", "SparkListenerExecutorRemoved").Field("Timestamp", removed_ms);
  removed.Field("Executor ID", executor.id).Field("Removed Reason", executor.removed_reason).EndObject();

  JsonLine block_manager;
  block_manager.BeginObject().Field("Event", "SparkListenerBlockManagerRemoved");
  block_manager.Key("Block Manager ID").BeginObject().Field("Executor ID", executor.id);
  block_manager.Field("Host", executor.host).Field("Port", kBlockManagerPort).EndObject();
  block_manager.Field("Timestamp", removed_ms).EndObject();
  return {removed.Take(), block_manager.Take()};
}

}  // namespace sparktrace::sim::eventlog
