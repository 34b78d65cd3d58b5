#include "spark_connect/request_info.h"

namespace sparktrace::spark_connect {

std::string_view PlanKindName(PlanKind kind) {
  switch (kind) {
    case PlanKind::kNone:
      return "none";
    case PlanKind::kRoot:
      return "root";
    case PlanKind::kCommand:
      return "command";
  }
  return "other";
}

std::string_view CommandKindName(CommandKind kind) {
  switch (kind) {
    case CommandKind::kNone:
      return "none";
    case CommandKind::kRegisterFunction:
      return "register_function";
    case CommandKind::kWriteOperation:
      return "write_operation";
    case CommandKind::kCreateDataFrameView:
      return "create_dataframe_view";
    case CommandKind::kWriteOperationV2:
      return "write_operation_v2";
    case CommandKind::kSqlCommand:
      return "sql_command";
    case CommandKind::kWriteStreamOperationStart:
      return "write_stream_operation_start";
    case CommandKind::kStreamingQueryCommand:
      return "streaming_query_command";
    case CommandKind::kGetResourcesCommand:
      return "get_resources_command";
    case CommandKind::kStreamingQueryManagerCommand:
      return "streaming_query_manager_command";
    case CommandKind::kRegisterTableFunction:
      return "register_table_function";
    case CommandKind::kStreamingQueryListenerBusCommand:
      return "streaming_query_listener_bus_command";
    case CommandKind::kRegisterDataSource:
      return "register_data_source";
    case CommandKind::kCreateResourceProfileCommand:
      return "create_resource_profile_command";
    case CommandKind::kCheckpointCommand:
      return "checkpoint_command";
    case CommandKind::kRemoveCachedRemoteRelationCommand:
      return "remove_cached_remote_relation_command";
    case CommandKind::kMergeIntoTableCommand:
      return "merge_into_table_command";
    case CommandKind::kMlCommand:
      return "ml_command";
    case CommandKind::kExecuteExternalCommand:
      return "execute_external_command";
    case CommandKind::kExtension:
      return "extension";
    case CommandKind::kOther:
      return "other";
  }
  return "other";
}

std::string_view ReleaseTargetName(ReleaseTarget target) {
  switch (target) {
    case ReleaseTarget::kNone:
      return "none";
    case ReleaseTarget::kAll:
      return "all";
    case ReleaseTarget::kUntil:
      return "until";
  }
  return "other";
}

std::string_view InterruptTypeName(InterruptType type) {
  switch (type) {
    case InterruptType::kUnspecified:
      return "unspecified";
    case InterruptType::kAll:
      return "all";
    case InterruptType::kTag:
      return "tag";
    case InterruptType::kOperationId:
      return "operation_id";
    case InterruptType::kOther:
      return "other";
  }
  return "other";
}

std::string_view ConfigOperationName(ConfigOperation operation) {
  switch (operation) {
    case ConfigOperation::kNone:
      return "none";
    case ConfigOperation::kSet:
      return "set";
    case ConfigOperation::kGet:
      return "get";
    case ConfigOperation::kGetWithDefault:
      return "get_with_default";
    case ConfigOperation::kGetOption:
      return "get_option";
    case ConfigOperation::kGetAll:
      return "get_all";
    case ConfigOperation::kUnset:
      return "unset";
    case ConfigOperation::kIsModifiable:
      return "is_modifiable";
    case ConfigOperation::kOther:
      return "other";
  }
  return "other";
}

std::string_view AnalyzeKindName(AnalyzeKind kind) {
  switch (kind) {
    case AnalyzeKind::kNone:
      return "none";
    case AnalyzeKind::kSchema:
      return "schema";
    case AnalyzeKind::kExplain:
      return "explain";
    case AnalyzeKind::kTreeString:
      return "tree_string";
    case AnalyzeKind::kIsLocal:
      return "is_local";
    case AnalyzeKind::kIsStreaming:
      return "is_streaming";
    case AnalyzeKind::kInputFiles:
      return "input_files";
    case AnalyzeKind::kSparkVersion:
      return "spark_version";
    case AnalyzeKind::kDdlParse:
      return "ddl_parse";
    case AnalyzeKind::kSameSemantics:
      return "same_semantics";
    case AnalyzeKind::kSemanticHash:
      return "semantic_hash";
    case AnalyzeKind::kPersist:
      return "persist";
    case AnalyzeKind::kUnpersist:
      return "unpersist";
    case AnalyzeKind::kGetStorageLevel:
      return "get_storage_level";
    case AnalyzeKind::kJsonToDdl:
      return "json_to_ddl";
  }
  return "other";
}

std::string_view ArtifactPayloadName(ArtifactPayload payload) {
  switch (payload) {
    case ArtifactPayload::kNone:
      return "none";
    case ArtifactPayload::kBatch:
      return "batch";
    case ArtifactPayload::kBeginChunk:
      return "begin_chunk";
    case ArtifactPayload::kChunk:
      return "chunk";
  }
  return "other";
}

}  // namespace sparktrace::spark_connect
