#include "spark_connect/response_info.h"

namespace sparktrace::spark_connect {

std::string_view ResponseKindName(ResponseKind kind) {
  switch (kind) {
    case ResponseKind::kNone:
      return "none";
    case ResponseKind::kArrowBatch:
      return "arrow_batch";
    case ResponseKind::kSqlCommandResult:
      return "sql_command_result";
    case ResponseKind::kWriteStreamOperationStartResult:
      return "write_stream_operation_start_result";
    case ResponseKind::kStreamingQueryCommandResult:
      return "streaming_query_command_result";
    case ResponseKind::kGetResourcesCommandResult:
      return "get_resources_command_result";
    case ResponseKind::kStreamingQueryManagerCommandResult:
      return "streaming_query_manager_command_result";
    case ResponseKind::kResultComplete:
      return "result_complete";
    case ResponseKind::kStreamingQueryListenerEventsResult:
      return "streaming_query_listener_events_result";
    case ResponseKind::kCreateResourceProfileCommandResult:
      return "create_resource_profile_command_result";
    case ResponseKind::kExecutionProgress:
      return "execution_progress";
    case ResponseKind::kCheckpointCommandResult:
      return "checkpoint_command_result";
    case ResponseKind::kMlCommandResult:
      return "ml_command_result";
    case ResponseKind::kPipelineEventResult:
      return "pipeline_event_result";
    case ResponseKind::kPipelineCommandResult:
      return "pipeline_command_result";
    case ResponseKind::kExtension:
      return "extension";
  }
  return "other";
}

}  // namespace sparktrace::spark_connect
