#include "spark_connect/response_decoder.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "spark_connect/wire_reader.h"

namespace sparktrace::spark_connect {
namespace {

// ---- ExecutePlanResponse ----------------------------------------------------------------------

// The members of ExecutePlanResponse.response_type (3.5 through 4.1).
constexpr std::array<std::uint32_t, 15> kResponseTypeFields = {2,  5,  8,  9,  10, 11, 14, 16,
                                                               17, 18, 19, 20, 21, 22, 999};

bool IsResponseTypeField(std::uint32_t number) {
  return std::find(kResponseTypeFields.begin(), kResponseTypeFields.end(), number) !=
         kResponseTypeFields.end();
}

// A oneof keeps only its last member: switching members drops what the previous one carried,
// while a repeated occurrence of the same member merges into it.
void SetResponseKind(ResponseKind kind, ResponseInfo* info) {
  if (info->kind == kind) {
    return;
  }
  info->kind = kind;
  info->arrow_row_count = 0;
  info->arrow_data_bytes = 0;
  info->arrow_start_offset.reset();
  info->stages.clear();
  info->dropped_stages = 0;
  info->num_inflight_tasks = 0;
}

void DecodeArrowBatch(WireReader& reader, ResponseInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    switch (tag.number) {
      case 1:
        reader.ReadInt64(tag, &info->arrow_row_count);
        break;
      case 2: {
        std::uint64_t length = 0;  // the Arrow IPC stream itself is skipped, never copied
        if (reader.SkipLengthDelimited(tag, &length)) {
          info->arrow_data_bytes = length;
        }
        break;
      }
      case 3: {
        std::int64_t start_offset = 0;
        if (reader.ReadInt64(tag, &start_offset)) {
          info->arrow_start_offset = start_offset;
        }
        break;
      }
      default:
        reader.SkipField(tag);
    }
  }
}

void DecodeStageInfo(WireReader& reader, StageProgress* stage) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    switch (tag.number) {
      case 1:
        reader.ReadInt64(tag, &stage->stage_id);
        break;
      case 2:
        reader.ReadInt64(tag, &stage->num_tasks);
        break;
      case 3:
        reader.ReadInt64(tag, &stage->num_completed_tasks);
        break;
      case 4:
        reader.ReadInt64(tag, &stage->input_bytes_read);
        break;
      case 5:
        reader.ReadBool(tag, &stage->done);
        break;
      default:
        reader.SkipField(tag);
    }
  }
}

void DecodeExecutionProgress(WireReader& reader, ResponseInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == 1) {
      if (info->stages.size() >= kMaxDecodedStages) {
        std::uint64_t ignored_length = 0;
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          ++info->dropped_stages;
        }
      } else if (auto stage_reader = reader.EnterMessage(tag)) {
        StageProgress stage;
        DecodeStageInfo(*stage_reader, &stage);
        info->stages.push_back(stage);
      }
    } else if (tag.number == 2) {
      reader.ReadInt64(tag, &info->num_inflight_tasks);
    } else {
      reader.SkipField(tag);
    }
  }
}

void DecodeExecutePlanResponse(WireReader& reader, ResponseInfo* info) {
  FieldTag tag;
  std::uint64_t ignored_length = 0;
  while (reader.NextField(&tag)) {
    switch (tag.number) {
      case 1:
        reader.ReadString(tag, kMaxCopiedStringBytes, &info->session_id);
        continue;
      case 12:
        reader.ReadString(tag, kMaxCopiedStringBytes, &info->operation_id);
        continue;
      case 13:
        reader.ReadString(tag, kMaxCopiedStringBytes, &info->response_id);
        continue;
      case 15:
        reader.ReadString(tag, kMaxCopiedStringBytes, &info->server_side_session_id);
        continue;
      case 4:
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          info->has_metrics = true;
        }
        continue;
      case 6:
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          ++info->observed_metrics_count;
        }
        continue;
      case 7:
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          info->has_schema = true;
        }
        continue;
      default:
        break;
    }
    if (!IsResponseTypeField(tag.number)) {
      reader.SkipField(tag);
    } else if (tag.number == 2) {
      if (auto batch = reader.EnterMessage(tag)) {
        SetResponseKind(ResponseKind::kArrowBatch, info);
        DecodeArrowBatch(*batch, info);
      }
    } else if (tag.number == 18) {
      if (auto progress = reader.EnterMessage(tag)) {
        SetResponseKind(ResponseKind::kExecutionProgress, info);
        DecodeExecutionProgress(*progress, info);
      }
    } else if (reader.SkipLengthDelimited(tag, &ignored_length)) {
      SetResponseKind(static_cast<ResponseKind>(tag.number), info);
    }
  }
}

// ---- Unary responses --------------------------------------------------------------------------

struct SessionFieldNumbers {
  std::uint32_t session_id = 0;
  std::uint32_t server_side_session_id = 0;
};

SessionFieldNumbers SessionFieldsOf(Method method) {
  switch (method) {
    case Method::kAnalyzePlan:
      return {1, 15};
    case Method::kConfig:
      return {1, 4};
    case Method::kAddArtifacts:
    case Method::kArtifactStatus:
      return {2, 3};
    case Method::kInterrupt:
    case Method::kReleaseExecute:
      return {1, 3};
    case Method::kReleaseSession:
    case Method::kCloneSession:
    case Method::kGetStatus:
      return {1, 2};
    case Method::kFetchErrorDetails:
      return {4, 3};
    case Method::kExecutePlan:
    case Method::kReattachExecute:
    case Method::kUnknown:
      break;
  }
  return {};
}

void DecodeUnaryResponse(Method method, WireReader& reader, ResponseInfo* info) {
  const SessionFieldNumbers fields = SessionFieldsOf(method);
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == fields.session_id) {
      reader.ReadString(tag, kMaxCopiedStringBytes, &info->session_id);
    } else if (tag.number == fields.server_side_session_id) {
      reader.ReadString(tag, kMaxCopiedStringBytes, &info->server_side_session_id);
    } else if (method == Method::kReleaseExecute && tag.number == 2) {
      reader.ReadString(tag, kMaxCopiedStringBytes, &info->operation_id);
    } else if (method == Method::kInterrupt && tag.number == 2) {
      if (info->interrupted_ids.size() < kMaxCopiedRepeatedStrings) {
        std::string id;
        if (reader.ReadString(tag, kMaxCopiedStringBytes, &id)) {
          info->interrupted_ids.push_back(std::move(id));
        }
      } else {
        std::uint64_t ignored_length = 0;
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          ++info->dropped_interrupted_ids;
        }
      }
    } else {
      reader.SkipField(tag);  // results, config pairs, error details: not traced
    }
  }
}

}  // namespace

ResponseInfo DecodeResponse(Method method, MessageSlices message) {
  ResponseInfo info;
  info.method = method;
  if (method == Method::kUnknown) {
    return info;
  }
  info.status = DecodeStatus::kOk;
  WireReader reader(message, &info.status);
  if (RespondsWithExecutePlanResponses(method)) {
    DecodeExecutePlanResponse(reader, &info);
  } else {
    DecodeUnaryResponse(method, reader, &info);
  }
  return info;
}

}  // namespace sparktrace::spark_connect
