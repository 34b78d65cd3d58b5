#pragma once
// RequestInfo: what tracing needs from one Spark Connect request message, and nothing more.
//
// Field numbers are given as "Message.field (n)". Identifiers are copied, within copy_limits.h;
// plans, SQL text, Config keys and values, artifact data and extensions never are: Config values
// and SQL can carry credentials.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spark_connect/copy_limits.h"
#include "spark_connect/decode_status.h"
#include "spark_connect/method.h"

namespace sparktrace::spark_connect {

// Plan.op_type: what an ExecutePlan runs.
enum class PlanKind : std::uint8_t {
  kNone,     // no plan, or a compressed plan of unspecified type
  kRoot,     // Plan.root (1): a query returning rows
  kCommand,  // Plan.command (2)
};

// Command.command_type. Values are the Command field numbers (every Command field is a member of
// that oneof); kOther is a field number this list does not know (a newer Spark).
enum class CommandKind : std::int32_t {
  kNone = 0,
  kRegisterFunction = 1,
  kWriteOperation = 2,
  kCreateDataFrameView = 3,
  kWriteOperationV2 = 4,
  kSqlCommand = 5,
  kWriteStreamOperationStart = 6,
  kStreamingQueryCommand = 7,
  kGetResourcesCommand = 8,
  kStreamingQueryManagerCommand = 9,
  kRegisterTableFunction = 10,
  kStreamingQueryListenerBusCommand = 11,  // 4.0 adds 11-18
  kRegisterDataSource = 12,
  kCreateResourceProfileCommand = 13,
  kCheckpointCommand = 14,
  kRemoveCachedRemoteRelationCommand = 15,
  kMergeIntoTableCommand = 16,
  kMlCommand = 17,
  kExecuteExternalCommand = 18,
  kExtension = 999,
  kOther = -1,
};

// ReleaseExecuteRequest.release oneof.
enum class ReleaseTarget : std::uint8_t {
  kNone,
  kAll,    // release_all (5): the operation is finished with
  kUntil,  // release_until (6): responses up to release_until_response_id
};

// InterruptRequest.interrupt_type (4).
enum class InterruptType : std::uint8_t {
  kUnspecified = 0,
  kAll = 1,          // every running execution of the session
  kTag = 2,          // executions carrying interrupt_operation_tag
  kOperationId = 3,  // the execution interrupt_operation_id
  kOther,            // a value this list does not know
};

// ConfigRequest.Operation.op_type. Values are the Operation field numbers.
enum class ConfigOperation : std::int32_t {
  kNone = 0,
  kSet = 1,
  kGet = 2,
  kGetWithDefault = 3,
  kGetOption = 4,
  kGetAll = 5,
  kUnset = 6,
  kIsModifiable = 7,
  kOther = -1,  // a field number this list does not know
};

// AnalyzePlanRequest.analyze. Values are the AnalyzePlanRequest field numbers.
enum class AnalyzeKind : std::int32_t {
  kNone = 0,
  kSchema = 4,
  kExplain = 5,
  kTreeString = 6,
  kIsLocal = 7,
  kIsStreaming = 8,
  kInputFiles = 9,
  kSparkVersion = 10,
  kDdlParse = 11,
  kSameSemantics = 12,
  kSemanticHash = 13,
  kPersist = 14,
  kUnpersist = 15,
  kGetStorageLevel = 16,
  kJsonToDdl = 18,  // 4.0
};

// AddArtifactsRequest.payload. Values are the field numbers.
enum class ArtifactPayload : std::uint8_t {
  kNone = 0,
  kBatch = 3,
  kBeginChunk = 4,
  kChunk = 5,
};

struct RequestInfo {
  Method method = Method::kUnknown;
  DecodeStatus status = DecodeStatus::kNotDecoded;

  // Every request: session_id (1), user_context (2) → UserContext.user_id (1), client_type
  // (optional; 4 in ExecutePlan, Reattach, Release, Config, FetchErrorDetails; 6 in AddArtifacts;
  // 3 elsewhere), client_observed_server_side_session_id (optional, 4.0+; 8 ExecutePlan, 6 Reattach,
  // 7 Release/Interrupt/AddArtifacts, 17 AnalyzePlan, 8 Config, 5 ArtifactStatus/FetchErrorDetails/
  // CloneSession, 4 GetStatus; none in ReleaseSession).
  std::string session_id;
  std::string user_id;
  std::optional<std::string> client_type;
  std::optional<std::string> client_observed_server_side_session_id;

  // The operation the request belongs to: ExecutePlanRequest.operation_id (6, optional: absent
  // means the server picks it), ReattachExecuteRequest / ReleaseExecuteRequest.operation_id (3).
  std::optional<std::string> operation_id;

  // ExecutePlanRequest.
  std::vector<std::string> tags;  // tags (7), at most kMaxCopiedRepeatedStrings
  std::uint32_t dropped_tags = 0;
  PlanKind plan_kind = PlanKind::kNone;  // plan (3) → Plan.op_type
  bool plan_compressed = false;          // Plan.compressed_operation (3, 4.1): kind from its op_type (2) only
  CommandKind command_kind = CommandKind::kNone;
  std::int32_t command_field = 0;        // the Command field number, also when command_kind is kOther
  std::int32_t root_relation_field = 0;  // the Relation rel_type field number of a root (10 = sql)
  // request_options (5) → RequestOption.reattach_options (1) → ReattachOptions.reattachable (1).
  // nullopt without reattach options; true when any option asks for it, as Spark decides.
  std::optional<bool> reattachable;

  // ReattachExecuteRequest.last_response_id (5): resume after this response.
  std::optional<std::string> last_response_id;

  // ReleaseExecuteRequest.
  ReleaseTarget release_target = ReleaseTarget::kNone;
  std::string release_until_response_id;  // release_until (6) → ReleaseUntil.response_id (1)

  // InterruptRequest: interrupt_type (4), and the interrupt oneof: operation_tag (5) | operation_id (6).
  InterruptType interrupt_type = InterruptType::kUnspecified;
  std::optional<std::string> interrupt_operation_tag;
  std::optional<std::string> interrupt_operation_id;

  // ConfigRequest.operation (3) → which op_type field is set. Keys and values are never read.
  ConfigOperation config_operation = ConfigOperation::kNone;
  std::int32_t config_operation_field = 0;  // also when config_operation is kOther

  // AnalyzePlanRequest.analyze oneof.
  AnalyzeKind analyze_kind = AnalyzeKind::kNone;

  // AddArtifactsRequest.payload oneof.
  ArtifactPayload artifact_payload = ArtifactPayload::kNone;

  // FetchErrorDetailsRequest.error_id (3).
  std::string error_id;

  // ReleaseSessionRequest.allow_reconnect (4).
  bool allow_reconnect = false;

  bool operator==(const RequestInfo&) const = default;
};

// Names for span attributes and logs: the proto field names ("sql_command", "root", "until",
// "get_all", "spark_version", "batch"), "none", or "other".
std::string_view PlanKindName(PlanKind kind);
std::string_view CommandKindName(CommandKind kind);
std::string_view ReleaseTargetName(ReleaseTarget target);
std::string_view InterruptTypeName(InterruptType type);
std::string_view ConfigOperationName(ConfigOperation operation);
std::string_view AnalyzeKindName(AnalyzeKind kind);
std::string_view ArtifactPayloadName(ArtifactPayload payload);

}  // namespace sparktrace::spark_connect
