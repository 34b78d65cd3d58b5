#pragma once
// Which configuration properties of a SparkListenerEnvironmentUpdate are kept: the allow-list the
// diagnosis rules read (diagnose/), and nothing that may be a secret.
//
// Kept (exact keys, or prefixes ending in '.'):
//   spark.sql.adaptive.*, spark.sql.shuffle.partitions, spark.default.parallelism,
//   spark.sql.files.maxPartitionBytes, spark.sql.autoBroadcastJoinThreshold,
//   spark.executor.* (not extraJavaOptions/extraClassPath/extraLibraryPath), spark.driver.memory,
//   spark.driver.cores, spark.memory.*, spark.dynamicAllocation.*, spark.shuffle.*, spark.reducer.*,
//   spark.speculation*, spark.task.cpus, spark.task.maxFailures, spark.master,
//   spark.submit.deployMode, spark.kubernetes.allocation.*, spark.kubernetes.executor.request.*,
//   spark.kubernetes.executor.limit.*, spark.kubernetes.memoryOverheadFactor,
//   spark.hadoop.fs.s3a.*, fs.s3a.*, spark.sql.sources.commitProtocolClass,
//   spark.sql.parquet.output.committer.class, mapreduce.fileoutputcommitter.algorithm.version,
//   spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version.
// Never kept, whatever the list says: keys containing (case-insensitively) "secret", "password",
// "token", "access.key", "credential", "encryption", "signing", "passphrase", or ending in ".key".
// Values are cut to kMaxPropertyValueBytes.
//
// Pure functions; thread-safe.

#include <cstddef>
#include <string_view>

namespace sparktrace::listener::events {

inline constexpr std::size_t kMaxPropertyValueBytes = 256;

// True when `key` is on the allow-list and names nothing that may be a secret.
bool IsKeptProperty(std::string_view key);

}  // namespace sparktrace::listener::events
