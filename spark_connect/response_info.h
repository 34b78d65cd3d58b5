#pragma once
// ResponseInfo: what tracing needs from one Spark Connect response message.
//
// Mostly ExecutePlanResponse (the stream of ExecutePlan and ReattachExecute); for the unary
// methods only the session ids, plus the operation ids of ReleaseExecute and Interrupt responses.
// Field numbers are given as "(n)". Arrow data, schemas, metrics and results are never copied.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spark_connect/copy_limits.h"
#include "spark_connect/decode_status.h"
#include "spark_connect/method.h"

namespace sparktrace::spark_connect {

// ExecutePlanResponse.response_type: which oneof member a response carries. Values are the
// ExecutePlanResponse field numbers. A member newer than this list is indistinguishable from an
// unknown field and leaves kNone.
enum class ResponseKind : std::int32_t {
  kNone = 0,
  kArrowBatch = 2,
  kSqlCommandResult = 5,
  kWriteStreamOperationStartResult = 8,
  kStreamingQueryCommandResult = 9,
  kGetResourcesCommandResult = 10,
  kStreamingQueryManagerCommandResult = 11,
  kResultComplete = 14,
  kStreamingQueryListenerEventsResult = 16,  // 4.0 adds 16-20
  kCreateResourceProfileCommandResult = 17,
  kExecutionProgress = 18,
  kCheckpointCommandResult = 19,
  kMlCommandResult = 20,
  kPipelineEventResult = 21,  // 4.1 adds 21-22
  kPipelineCommandResult = 22,
  kExtension = 999,
};

// "arrow_batch", "result_complete", "execution_progress", …, "none".
std::string_view ResponseKindName(ResponseKind kind);

// ExecutePlanResponse.ExecutionProgress.StageInfo (4.0+).
struct StageProgress {
  std::int64_t stage_id = 0;             // (1)
  std::int64_t num_tasks = 0;            // (2)
  std::int64_t num_completed_tasks = 0;  // (3)
  std::int64_t input_bytes_read = 0;     // (4)
  bool done = false;                     // (5)

  bool operator==(const StageProgress&) const = default;
};

struct ResponseInfo {
  Method method = Method::kUnknown;
  DecodeStatus status = DecodeStatus::kNotDecoded;

  // session_id and server_side_session_id (4.0+). Their numbers differ per response message:
  // ExecutePlanResponse 1/15, AnalyzePlanResponse 1/15, ConfigResponse 1/4, AddArtifactsResponse
  // and ArtifactStatusesResponse 2/3, InterruptResponse 1/3, ReleaseExecuteResponse 1/3,
  // ReleaseSessionResponse 1/2, FetchErrorDetailsResponse 4/3, CloneSession/GetStatus 1/2.
  std::string session_id;
  std::string server_side_session_id;
  // ExecutePlanResponse.operation_id (12); ReleaseExecuteResponse.operation_id (2, absent when the
  // operation was already gone).
  std::string operation_id;

  // ExecutePlanResponse only.
  std::string response_id;  // (13)
  ResponseKind kind = ResponseKind::kNone;
  // arrow_batch (2): row_count (1), the byte length of data (2), start_offset (3, 4.0+).
  std::int64_t arrow_row_count = 0;
  std::uint64_t arrow_data_bytes = 0;
  std::optional<std::int64_t> arrow_start_offset;
  // execution_progress (18, 4.0+): stages (1), num_inflight_tasks (2).
  std::vector<StageProgress> stages;  // at most kMaxDecodedStages
  std::uint32_t dropped_stages = 0;
  std::int64_t num_inflight_tasks = 0;
  bool has_metrics = false;                  // metrics (4): usually on the last response only
  std::uint32_t observed_metrics_count = 0;  // observed_metrics (6)
  bool has_schema = false;                   // schema (7)

  // InterruptResponse.interrupted_ids (2), at most kMaxCopiedRepeatedStrings of them.
  std::vector<std::string> interrupted_ids;
  std::uint32_t dropped_interrupted_ids = 0;

  bool operator==(const ResponseInfo&) const = default;
};

}  // namespace sparktrace::spark_connect
