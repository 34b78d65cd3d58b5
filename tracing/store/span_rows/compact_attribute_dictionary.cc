#include "tracing/store/span_rows/compact_attribute_dictionary.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

namespace sparktrace::tracing::store {
namespace {

// Keys: the span vocabulary's (tracing/span_vocabulary.h, as of schema version 6) and the OTel
// semantic-convention keys the proxy records. Code = position + 1. APPEND ONLY.
constexpr std::array kKeys = {
    "airflow.dag_id",
    "airflow.task_id",
    "airflow.run_id",
    "airflow.try_number",
    "airflow.map_index",
    "airflow.task.state",
    "airflow.task.operator",
    "airflow.task.hostname",
    "airflow.version",
    "spark.connect.operation_id",
    "spark.connect.session_id",
    "spark.connect.user_id",
    "spark.connect.client_type",
    "spark.connect.plan_kind",
    "spark.connect.relation",
    "spark.connect.command",
    "spark.connect.tags",
    "spark.connect.reattachable",
    "spark.connect.operation.first_seen",
    "spark.connect.operation_id_header",
    "spark.connect.operation.ended_before_call",
    "spark.connect.server_side_session_id",
    "spark.connect.response.batches",
    "spark.connect.result_complete",
    "spark.connect.reattach.last_response_id",
    "spark.connect.release",
    "spark.connect.interrupt.type",
    "spark.connect.interrupt.target",
    "spark.connect.interrupted_ids",
    "spark.connect.analyze",
    "spark.connect.config.operation",
    "spark.connect.artifact.payload",
    "spark.connect.result.rows",
    "spark.connect.result.arrow_bytes",
    "spark.connect.result.batches",
    "spark.connect.reattach_count",
    "spark.connect.time_to_first_batch_ms",
    "spark.connect.response.rows",
    "spark.connect.response.bytes",
    "spark.connect.operation.outcome",
    "spark.connect.progress.stages_done",
    "spark.connect.progress.stages_total",
    "spark.connect.progress.tasks_done",
    "spark.connect.progress.tasks_total",
    "spark.connect.progress.input_bytes_read",
    "spark.connect.progress.inflight_tasks",
    "spark.connect.progress.updates",
    "spark.connect.progress.stages_dropped",
    "spark.connect.operation.state",
    "rpc.system",
    "rpc.service",
    "rpc.method",
    "rpc.grpc.status_code",
    "rpc.request.messages",
    "rpc.request.bytes",
    "rpc.response.messages",
    "rpc.response.bytes",
    "rpc.time_to_first_response_ms",
    "sparktrace.trace_origin",
    "sparktrace.interrupt_span_id",
    "sparktrace.undecodable_messages",
    "sparktrace.dropped_events",
    "spark.connect.job_tag",
    "spark.connect.produced_row_count",
    "spark.app.id",
    "spark.app.attempt_id",
    "spark.app.name",
    "spark.app.status",
    "spark.version",
    "spark.app.executors_added",
    "spark.app.connect_operations",
    "spark.job.id",
    "spark.job.status",
    "spark.job.stage_ids",
    "spark.sql.execution_id",
    "spark.sql.description",
    "spark.sql.job_ids",
    "spark.sql.job_count",
    "spark.sql.plan_version",
    "spark.sql.operator_count",
    "spark.sql.operator_time_ms",
    "spark.sql.plan_truncated",
    "spark.sql.plan",
    "spark.sql.operator.rank",
    "spark.sql.operator.node_id",
    "spark.sql.operator.name",
    "spark.sql.operator.time_ms",
    "spark.sql.operator.output_rows",
    "spark.sql.operator.spill_bytes",
    "spark.sql.operator.peak_memory_bytes",
    "spark.stage.id",
    "spark.stage.attempt",
    "spark.stage.name",
    "spark.stage.tasks",
    "spark.stage.tasks_ended",
    "spark.stage.failed_tasks",
    "spark.stage.killed_tasks",
    "spark.stage.parent_ids",
    "spark.stage.task_duration_ms.p50",
    "spark.stage.task_duration_ms.p95",
    "spark.stage.task_duration_ms.max",
    "spark.stage.task_duration_exact",
    "spark.stage.executor_cpu_time_ms",
    "spark.stage.jvm_gc_time_ms",
    "spark.stage.memory_spilled_bytes",
    "spark.stage.disk_spilled_bytes",
    "spark.stage.shuffle_read_bytes",
    "spark.stage.shuffle_fetch_wait_ms",
    "spark.stage.shuffle_write_bytes",
    "spark.stage.input_bytes",
    "spark.stage.input_records",
    "spark.stage.output_bytes",
    "spark.stage.output_records",
    "spark.stage.peak_execution_memory_bytes",
    "spark.phase.name",
    "spark.phase.duration_ms",
    "spark.phase.total_ms",
    "spark.phase.window_ms",
    "spark.executor.id",
    "finding.id",
    "finding.key",
    "finding.severity",
    "finding.scope",
    "finding.title",
    "finding.impact_seconds",
    "finding.recipe",
    "finding.fix",
    "finding.evidence",
    "finding.related",
    "finding.suppressed_reason",
    "finding.suppressed_until",
    "sparktrace.findings",
    "sparktrace.finding_ids",
    "sparktrace.incomplete",
    "server.address",
    "server.port",
    "network.peer.address",
    "network.peer.port",
    "spark.stage.executor_run_time_ms",
    "spark.stage.task_duration_ms.profile",
    "spark.executors.active_at_start",
    "spark.executors.cores_at_start",
    "spark.executors.changes_not_listed",
    "spark.executors.active",
    "spark.executors.cores_active",
    "spark.executor.cores",
    "spark.executor.memory_bytes",
    "spark.executor.memory_overhead_bytes",
    "spark.driver.cores",
    "spark.driver.memory_bytes",
    "spark.driver.memory_overhead_bytes",
    "spark.app.others_executor_run_time_ms",
    "spark.app.other_operations",
};

// Values: the enumerations and constant strings of the vocabulary that most spans repeat.
// Code = position. APPEND ONLY.
constexpr std::array kValues = {
    "grpc",
    "spark.connect.SparkConnectService",
    "Config",
    "ExecutePlan",
    "AnalyzePlan",
    "AddArtifacts",
    "ArtifactStatus",
    "Interrupt",
    "ReattachExecute",
    "ReleaseExecute",
    "ReleaseSession",
    "FetchErrorDetails",
    "CloneSession",
    "new",
    "client",
    "airflow",
    "unknown",
    "get",
    "set",
    "get_option",
    "get_all",
    "unset",
    "is_modifiable",
    "get_with_default",
    "running",
    "succeeded",
    "failed",
    "success",
    "finished",
    "canceled",
    "cancelled",
    "interrupted",
    "closed",
    "error",
    "RUNNING",
    "SUCCEEDED",
    "FAILED",
    "UNKNOWN",
    "plan",
    "command",
    "root",
    "sql",
    "initial",
    "adaptive",
    "none",
    "true",
    "false",
    "127.0.0.1",
};

// A text's code in one dictionary: an open-addressing table, at least four slots an entry (a power of
// two), probed linearly. Every stored span looks up each of its keys and most of its string values
// here. std::unordered_map hashed all of a text's bytes and divided by a prime bucket count: about 200
// instructions a lookup, an eighth of a call's encoding (callgrind, bench/store_instructions.py). Here
// the hash reads a text's length and its first and last eight bytes, and a probe compares the length
// before the bytes.
class CodeTable {
 public:
  template <std::size_t N>
  CodeTable(const std::array<const char*, N>& entries, std::uint32_t first) {
    std::size_t size = 16;
    while (size < 4 * N) size *= 2;
    slots_.resize(size);
    mask_ = size - 1;
    for (std::size_t i = 0; i < N; ++i) {
      const std::string_view text(entries[i]);
      std::size_t at = Hash(text) & mask_;
      while (slots_[at].filled) at = (at + 1) & mask_;
      slots_[at] = Slot{text, first + static_cast<std::uint32_t>(i), true};
    }
  }

  std::optional<std::uint32_t> Find(std::string_view text) const {
    for (std::size_t at = Hash(text) & mask_;; at = (at + 1) & mask_) {
      const Slot& slot = slots_[at];
      if (!slot.filled) return std::nullopt;
      if (slot.text == text) return slot.code;
    }
  }

 private:
  struct Slot {
    std::string_view text;
    std::uint32_t code = 0;
    bool filled = false;
  };

  static std::size_t Hash(std::string_view text) {
    std::uint64_t head = 0;
    std::uint64_t tail = 0;
    std::memcpy(&head, text.data(), std::min<std::size_t>(text.size(), sizeof head));
    if (text.size() > sizeof tail) std::memcpy(&tail, text.data() + text.size() - sizeof tail, sizeof tail);
    std::uint64_t hash = (head * 0x9e3779b97f4a7c15ULL) ^ (tail * 0xc2b2ae3d27d4eb4fULL) ^ text.size();
    hash ^= hash >> 32;
    hash ^= hash >> 17;
    return static_cast<std::size_t>(hash);
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

// Shareable keys (shared/shared_attributes.h): what a call repeats from its client, connection, session
// and Airflow task, so that a session's calls keep it once. APPEND ONLY as well: a stored row's own
// part leaves out every key listed here, and the reads look a listed key up in its set alone.
// airflow.map_index is not listed: the task index reads it in SQL from every Airflow span.
constexpr std::array<std::string_view, 13> kShareableKeys = {
    "rpc.system",
    "rpc.service",
    "server.address",
    "server.port",
    "network.peer.address",
    "spark.connect.session_id",
    "spark.connect.user_id",
    "spark.connect.client_type",
    "spark.connect.server_side_session_id",
    "airflow.dag_id",
    "airflow.task_id",
    "airflow.run_id",
    "airflow.try_number",
};

// The shareable keys by length (kShareableKeys' indexes, kNoKey after the last): asked for every
// attribute of every span written, most keys are told apart by their length alone.
constexpr std::size_t kLongestShareable = 40;
constexpr std::size_t kShareableOfOneLength = 4;
constexpr std::uint8_t kNoKey = 0xff;
constexpr auto kShareableByLength = [] {
  std::array<std::array<std::uint8_t, kShareableOfOneLength>, kLongestShareable + 1> table{};
  for (auto& same_length : table) same_length.fill(kNoKey);
  for (std::size_t i = 0; i < kShareableKeys.size(); ++i) {
    auto& same_length = table[kShareableKeys[i].size()];  // out of range: not a constant expression
    std::size_t at = 0;
    while (same_length[at] != kNoKey) ++at;
    same_length[at] = static_cast<std::uint8_t>(i);
  }
  return table;
}();

}  // namespace

bool IsShareableAttributeKey(std::string_view key) {
  if (key.size() > kLongestShareable) return false;
  for (const std::uint8_t index : kShareableByLength[key.size()]) {
    if (index == kNoKey) return false;
    if (kShareableKeys[index] == key) return true;
  }
  return false;
}

std::optional<std::uint32_t> CompactKeyCode(std::string_view key) {
  static const CodeTable codes(kKeys, 1);
  return codes.Find(key);
}

std::optional<std::string_view> CompactKeyOfCode(std::uint64_t code) {
  if (code == 0 || code > kKeys.size()) return std::nullopt;
  return kKeys[code - 1];
}

std::optional<std::uint32_t> CompactValueCode(std::string_view value) {
  static const CodeTable codes(kValues, 0);
  return codes.Find(value);
}

std::optional<std::string_view> CompactValueOfCode(std::uint64_t code) {
  if (code >= kValues.size()) return std::nullopt;
  return kValues[code];
}

std::string_view StoredNamePrefix() { return "spark.connect.SparkConnectService/"; }

namespace {

// APPEND-ONLY, as the dictionaries above: rows hold these codes. Control bytes that tools print as
// layout or act on (tab, line feed, carriage return, escape; bell and backspace) are never codes, so
// that a coded row stays readable in psql and sqlite3.
constexpr std::array<StoredWholeName, 18> kStoredWholeNames{{
    {'\x03', "spark_connect.operation"},
    {'\x04', "spark.stage"},
    {'\x05', "spark.job"},
    {'\x06', "spark.sql.execution"},
    {'\x0e', "spark.connect.SparkConnectService/ExecutePlan"},
    {'\x0f', "spark.connect.SparkConnectService/AnalyzePlan"},
    {'\x10', "spark.connect.SparkConnectService/Config"},
    {'\x11', "spark.connect.SparkConnectService/AddArtifacts"},
    {'\x12', "spark.connect.SparkConnectService/ArtifactStatus"},
    {'\x13', "spark.connect.SparkConnectService/Interrupt"},
    {'\x14', "spark.connect.SparkConnectService/ReattachExecute"},
    {'\x15', "spark.connect.SparkConnectService/ReleaseExecute"},
    {'\x16', "spark.connect.SparkConnectService/ReleaseSession"},
    {'\x17', "spark.connect.SparkConnectService/FetchErrorDetails"},
    {'\x18', "spark.connect.SparkConnectService/CloneSession"},
    {'\x19', "spark.connect.SparkConnectService/GetStatus"},
    {'\x1a', "spark.application"},
    {'\x1c', "spark.connect.operation.lifecycle"},
}};

constexpr bool CodesAreStoredNameCodes() {
  for (std::size_t i = 0; i < kStoredWholeNames.size(); ++i) {
    const char code = kStoredWholeNames[i].code;
    if (code < '\x03' || code > '\x1f' || code == '\x07' || code == '\x08' || code == '\t' || code == '\n' ||
        code == '\r' || code == '\x1b')
      return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (kStoredWholeNames[j].code == code) return false;
    }
  }
  return true;
}
static_assert(CodesAreStoredNameCodes());

}  // namespace

std::span<const StoredWholeName> StoredWholeNames() { return kStoredWholeNames; }

std::optional<char> StoredWholeNameCode(std::string_view name) {
  static const CodeTable codes = [] {
    std::array<const char*, kStoredWholeNames.size()> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = kStoredWholeNames[i].name;
    return CodeTable(names, 0);
  }();
  const std::optional<std::uint32_t> at = codes.Find(name);
  if (!at) return std::nullopt;
  return kStoredWholeNames[*at].code;
}

std::optional<std::string_view> StoredWholeNameOf(char code) {
  for (const StoredWholeName& entry : kStoredWholeNames) {
    if (entry.code == code) return entry.name;
  }
  return std::nullopt;
}

}  // namespace sparktrace::tracing::store
