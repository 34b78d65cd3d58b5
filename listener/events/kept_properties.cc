#include "listener/events/kept_properties.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace sparktrace::listener::events {
namespace {

constexpr std::array<std::string_view, 16> kKeptPrefixes = {
    "spark.sql.adaptive.",
    "spark.executor.",
    "spark.memory.",
    "spark.dynamicAllocation.",
    "spark.shuffle.",
    "spark.reducer.",
    "spark.speculation",
    "spark.kubernetes.allocation.",
    "spark.kubernetes.executor.request.",
    "spark.kubernetes.executor.limit.",
    "spark.hadoop.fs.s3a.",
    "fs.s3a.",
    "spark.task.cpus",
    "spark.task.maxFailures",
    "spark.driver.memory",
    "spark.driver.cores",
};

constexpr std::array<std::string_view, 11> kKeptKeys = {
    "spark.sql.shuffle.partitions",
    "spark.default.parallelism",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.master",
    "spark.submit.deployMode",
    "spark.kubernetes.memoryOverheadFactor",
    "spark.sql.sources.commitProtocolClass",
    "spark.sql.parquet.output.committer.class",
    "mapreduce.fileoutputcommitter.algorithm.version",
    "spark.hadoop.mapreduce.fileoutputcommitter.algorithm.version",
};

// Executor options that are free text (JVM flags, paths) and may carry anything.
constexpr std::array<std::string_view, 3> kFreeTextExecutorKeys = {
    "spark.executor.extraJavaOptions", "spark.executor.extraClassPath", "spark.executor.extraLibraryPath"};

constexpr std::array<std::string_view, 8> kSecretWords = {
    "secret", "password", "token", "access.key", "credential", "encryption", "signing", "passphrase"};

bool MaySecret(std::string_view key) {
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower.ends_with(".key")) return true;
  return std::any_of(kSecretWords.begin(), kSecretWords.end(),
                     [&lower](std::string_view word) { return lower.find(word) != std::string::npos; });
}

}  // namespace

bool IsKeptProperty(std::string_view key) {
  const bool listed = std::find(kKeptKeys.begin(), kKeptKeys.end(), key) != kKeptKeys.end() ||
                      std::any_of(kKeptPrefixes.begin(), kKeptPrefixes.end(),
                                  [key](std::string_view prefix) { return key.starts_with(prefix); });
  if (!listed) return false;
  if (std::find(kFreeTextExecutorKeys.begin(), kFreeTextExecutorKeys.end(), key) !=
      kFreeTextExecutorKeys.end()) {
    return false;
  }
  return !MaySecret(key);
}

}  // namespace sparktrace::listener::events
