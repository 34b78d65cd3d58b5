#include "spark_connect/request_decoder.h"

#include <string>
#include <utility>

#include "spark_connect/wire_reader.h"

namespace sparktrace::spark_connect {
namespace {

// Field numbers shared by every request message.
constexpr std::uint32_t kSessionIdField = 1;
constexpr std::uint32_t kUserContextField = 2;
constexpr std::uint32_t kUserIdField = 1;  // in UserContext

// The common fields whose numbers differ between request messages (0 = absent).
struct CommonFieldNumbers {
  std::uint32_t client_type = 0;
  std::uint32_t client_observed_server_side_session_id = 0;
};

CommonFieldNumbers CommonFieldsOf(Method method) {
  switch (method) {
    case Method::kExecutePlan:
      return {4, 8};
    case Method::kReattachExecute:
      return {4, 6};
    case Method::kReleaseExecute:
      return {4, 7};
    case Method::kInterrupt:
      return {3, 7};
    case Method::kAnalyzePlan:
      return {3, 17};
    case Method::kConfig:
      return {4, 8};
    case Method::kAddArtifacts:
      return {6, 7};
    case Method::kArtifactStatus:
      return {3, 5};
    case Method::kReleaseSession:
      return {3, 0};
    case Method::kFetchErrorDetails:
      return {4, 5};
    case Method::kCloneSession:
      return {3, 5};
    case Method::kGetStatus:
      return {3, 4};
    case Method::kUnknown:
      break;
  }
  return {};
}

void ReadId(WireReader& reader, const FieldTag& tag, std::string* out) {
  reader.ReadString(tag, kMaxCopiedStringBytes, out);
}

void ReadOptionalId(WireReader& reader, const FieldTag& tag, std::optional<std::string>* out) {
  std::string value;
  if (reader.ReadString(tag, kMaxCopiedStringBytes, &value)) {
    *out = std::move(value);
  }
}

void DecodeUserContext(WireReader& reader, RequestInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == kUserIdField) {
      ReadId(reader, tag, &info->user_id);
    } else {
      reader.SkipField(tag);  // user_name (2) and extensions (999) are not traced
    }
  }
}

// ---- ExecutePlanRequest -----------------------------------------------------------------------

CommandKind CommandKindOf(std::uint32_t field_number) {
  if ((field_number >= 1 && field_number <= 18) || field_number == 999) {
    return static_cast<CommandKind>(field_number);
  }
  return CommandKind::kOther;
}

bool IsKnownCommandField(std::uint32_t field_number) {
  return CommandKindOf(field_number) != CommandKind::kOther;
}

void DecodeCommand(WireReader& reader, RequestInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    // Every Command field belongs to command_type, so an embedded message under an unknown number
    // is a command type newer than this decoder, unless a known command is already there (then it
    // is just an unknown field, as protobuf would see it). Unknown scalars are unknown fields.
    const bool known = IsKnownCommandField(tag.number);
    const bool newer_command =
        !known && tag.wire_type == WireType::kLengthDelimited &&
        (info->command_kind == CommandKind::kNone || info->command_kind == CommandKind::kOther);
    if (!known && !newer_command) {
      reader.SkipField(tag);
      continue;
    }
    std::uint64_t ignored_length = 0;
    if (reader.SkipLengthDelimited(tag, &ignored_length)) {
      info->command_kind = CommandKindOf(tag.number);
      info->command_field = static_cast<std::int32_t>(tag.number);
    }
  }
}

void DecodeRelation(WireReader& reader, RequestInfo* info) {
  constexpr std::uint32_t kCommonField = 1;  // RelationCommon; every other field is rel_type
  FieldTag tag;
  while (reader.NextField(&tag)) {
    // Only the top-level tag is read: relations nest arbitrarily and are skipped by length.
    if (tag.number != kCommonField && tag.wire_type == WireType::kLengthDelimited) {
      info->root_relation_field = static_cast<std::int32_t>(tag.number);
    }
    reader.SkipField(tag);
  }
}

void ResetPlan(RequestInfo* info, PlanKind kind, bool compressed) {
  info->plan_kind = kind;
  info->plan_compressed = compressed;
  info->command_kind = CommandKind::kNone;
  info->command_field = 0;
  info->root_relation_field = 0;
}

void DecodeCompressedOperation(WireReader& reader, RequestInfo* info) {
  constexpr std::uint32_t kOpTypeField = 2;  // enum: 1 relation, 2 command
  FieldTag tag;
  while (reader.NextField(&tag)) {
    std::int32_t op_type = 0;
    if (tag.number == kOpTypeField) {
      if (reader.ReadInt32(tag, &op_type)) {
        info->plan_kind = op_type == 1   ? PlanKind::kRoot
                          : op_type == 2 ? PlanKind::kCommand
                                         : PlanKind::kNone;
      }
    } else {
      reader.SkipField(tag);  // data (1) stays compressed and unread
    }
  }
}

void DecodePlan(WireReader& reader, RequestInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    switch (tag.number) {
      case 1:  // root
        if (auto relation = reader.EnterMessage(tag)) {
          // Setting another oneof member clears the previous one; the same member merges.
          if (info->plan_kind != PlanKind::kRoot || info->plan_compressed) {
            ResetPlan(info, PlanKind::kRoot, false);
          }
          DecodeRelation(*relation, info);
        }
        break;
      case 2:  // command
        if (auto command = reader.EnterMessage(tag)) {
          if (info->plan_kind != PlanKind::kCommand || info->plan_compressed) {
            ResetPlan(info, PlanKind::kCommand, false);
          }
          DecodeCommand(*command, info);
        }
        break;
      case 3:  // compressed_operation (4.1)
        if (auto compressed = reader.EnterMessage(tag)) {
          if (!info->plan_compressed) {
            ResetPlan(info, PlanKind::kNone, true);
          }
          DecodeCompressedOperation(*compressed, info);
        }
        break;
      default:
        reader.SkipField(tag);
    }
  }
}

void DecodeReattachOptions(WireReader& reader, bool* reattachable) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == 1) {
      reader.ReadBool(tag, reattachable);
    } else {
      reader.SkipField(tag);
    }
  }
}

// One RequestOption. Spark treats an execution as reattachable when any option has
// reattach_options.reattachable set.
void DecodeRequestOption(WireReader& reader, RequestInfo* info) {
  constexpr std::uint32_t kReattachOptionsField = 1;
  constexpr std::uint32_t kExtensionField = 999;
  bool has_reattach_options = false;
  bool reattachable = false;
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == kReattachOptionsField) {
      if (auto options = reader.EnterMessage(tag)) {
        has_reattach_options = true;
        DecodeReattachOptions(*options, &reattachable);
      }
    } else if (tag.number == kExtensionField && tag.wire_type == WireType::kLengthDelimited) {
      has_reattach_options = false;  // the oneof switched to the extension
      reattachable = false;
      reader.SkipField(tag);
    } else {
      reader.SkipField(tag);
    }
  }
  if (has_reattach_options) {
    info->reattachable = info->reattachable.value_or(false) || reattachable;
  }
}

bool DecodeExecutePlanField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  switch (tag.number) {
    case 3:
      if (auto plan = reader.EnterMessage(tag)) {
        DecodePlan(*plan, info);
      }
      return true;
    case 5:
      if (auto option = reader.EnterMessage(tag)) {
        DecodeRequestOption(*option, info);
      }
      return true;
    case 6:
      ReadOptionalId(reader, tag, &info->operation_id);
      return true;
    case 7:
      if (info->tags.size() < kMaxCopiedRepeatedStrings) {
        std::string value;
        if (reader.ReadString(tag, kMaxCopiedStringBytes, &value)) {
          info->tags.push_back(std::move(value));
        }
      } else {
        std::uint64_t ignored_length = 0;
        if (reader.SkipLengthDelimited(tag, &ignored_length)) {
          ++info->dropped_tags;
        }
      }
      return true;
    default:
      return false;
  }
}

// ---- Reattach, Release, Interrupt -------------------------------------------------------------

bool DecodeReattachExecuteField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  switch (tag.number) {
    case 3:
      ReadOptionalId(reader, tag, &info->operation_id);
      return true;
    case 5:
      ReadOptionalId(reader, tag, &info->last_response_id);
      return true;
    default:
      return false;
  }
}

void DecodeReleaseUntil(WireReader& reader, RequestInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == 1) {
      ReadId(reader, tag, &info->release_until_response_id);
    } else {
      reader.SkipField(tag);
    }
  }
}

bool DecodeReleaseExecuteField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  switch (tag.number) {
    case 3:
      ReadOptionalId(reader, tag, &info->operation_id);
      return true;
    case 5:  // release_all: an empty message
      if (auto release_all = reader.EnterMessage(tag)) {
        info->release_target = ReleaseTarget::kAll;
        info->release_until_response_id.clear();
        FieldTag inner;
        while (release_all->NextField(&inner)) {
          release_all->SkipField(inner);
        }
      }
      return true;
    case 6:  // release_until
      if (auto release_until = reader.EnterMessage(tag)) {
        if (info->release_target != ReleaseTarget::kUntil) {
          info->release_target = ReleaseTarget::kUntil;
          info->release_until_response_id.clear();
        }
        DecodeReleaseUntil(*release_until, info);
      }
      return true;
    default:
      return false;
  }
}

bool DecodeInterruptField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  switch (tag.number) {
    case 4: {
      std::int32_t type = 0;
      if (reader.ReadInt32(tag, &type)) {
        info->interrupt_type =
            type >= 0 && type <= 3 ? static_cast<InterruptType>(type) : InterruptType::kOther;
      }
      return true;
    }
    case 5: {
      std::string tag_value;
      if (reader.ReadString(tag, kMaxCopiedStringBytes, &tag_value)) {
        info->interrupt_operation_tag = std::move(tag_value);
        info->interrupt_operation_id.reset();  // oneof interrupt
      }
      return true;
    }
    case 6: {
      std::string operation_id;
      if (reader.ReadString(tag, kMaxCopiedStringBytes, &operation_id)) {
        info->interrupt_operation_id = std::move(operation_id);
        info->interrupt_operation_tag.reset();
      }
      return true;
    }
    default:
      return false;
  }
}

// ---- AnalyzePlan, Config, artifacts, sessions -------------------------------------------------

bool DecodeAnalyzePlanField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  const bool is_analyze_member = (tag.number >= 4 && tag.number <= 16) || tag.number == 18;
  if (!is_analyze_member) {
    return false;
  }
  std::uint64_t ignored_length = 0;  // the plan to analyze is not traced
  if (reader.SkipLengthDelimited(tag, &ignored_length)) {
    info->analyze_kind = static_cast<AnalyzeKind>(tag.number);
  }
  return true;
}

void DecodeConfigOperation(WireReader& reader, RequestInfo* info) {
  FieldTag tag;
  while (reader.NextField(&tag)) {
    // Every Operation field belongs to op_type, read as in DecodeCommand. The body, which holds
    // the keys and values, is skipped unread.
    const bool known = tag.number >= 1 && tag.number <= 7;
    const bool newer_operation = !known && tag.wire_type == WireType::kLengthDelimited &&
                                 (info->config_operation == ConfigOperation::kNone ||
                                  info->config_operation == ConfigOperation::kOther);
    if (!known && !newer_operation) {
      reader.SkipField(tag);
      continue;
    }
    std::uint64_t ignored_length = 0;
    if (reader.SkipLengthDelimited(tag, &ignored_length)) {
      info->config_operation = known ? static_cast<ConfigOperation>(tag.number) : ConfigOperation::kOther;
      info->config_operation_field = static_cast<std::int32_t>(tag.number);
    }
  }
}

bool DecodeConfigField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  if (tag.number != 3) {
    return false;
  }
  if (auto operation = reader.EnterMessage(tag)) {
    DecodeConfigOperation(*operation, info);
  }
  return true;
}

bool DecodeAddArtifactsField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  if (tag.number < 3 || tag.number > 5) {
    return false;
  }
  std::uint64_t ignored_length = 0;  // artifact bytes are not traced
  if (reader.SkipLengthDelimited(tag, &ignored_length)) {
    info->artifact_payload = static_cast<ArtifactPayload>(tag.number);
  }
  return true;
}

bool DecodeReleaseSessionField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  if (tag.number != 4) {
    return false;
  }
  reader.ReadBool(tag, &info->allow_reconnect);
  return true;
}

bool DecodeFetchErrorDetailsField(WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  if (tag.number != 3) {
    return false;
  }
  ReadId(reader, tag, &info->error_id);
  return true;
}

// Reads a field particular to `method`; false when the field is not one it traces.
bool DecodeMethodField(Method method, WireReader& reader, const FieldTag& tag, RequestInfo* info) {
  switch (method) {
    case Method::kExecutePlan:
      return DecodeExecutePlanField(reader, tag, info);
    case Method::kReattachExecute:
      return DecodeReattachExecuteField(reader, tag, info);
    case Method::kReleaseExecute:
      return DecodeReleaseExecuteField(reader, tag, info);
    case Method::kInterrupt:
      return DecodeInterruptField(reader, tag, info);
    case Method::kAnalyzePlan:
      return DecodeAnalyzePlanField(reader, tag, info);
    case Method::kConfig:
      return DecodeConfigField(reader, tag, info);
    case Method::kAddArtifacts:
      return DecodeAddArtifactsField(reader, tag, info);
    case Method::kReleaseSession:
      return DecodeReleaseSessionField(reader, tag, info);
    case Method::kFetchErrorDetails:
      return DecodeFetchErrorDetailsField(reader, tag, info);
    case Method::kArtifactStatus:
    case Method::kCloneSession:
    case Method::kGetStatus:
    case Method::kUnknown:
      return false;
  }
  return false;
}

}  // namespace

RequestInfo DecodeRequest(Method method, MessageSlices message) {
  RequestInfo info;
  info.method = method;
  if (method == Method::kUnknown) {
    return info;
  }
  info.status = DecodeStatus::kOk;
  const CommonFieldNumbers common = CommonFieldsOf(method);
  WireReader reader(message, &info.status);
  FieldTag tag;
  while (reader.NextField(&tag)) {
    if (tag.number == kSessionIdField) {
      ReadId(reader, tag, &info.session_id);
    } else if (tag.number == kUserContextField) {
      if (auto user_context = reader.EnterMessage(tag)) {
        DecodeUserContext(*user_context, &info);
      }
    } else if (tag.number == common.client_type) {
      ReadOptionalId(reader, tag, &info.client_type);
    } else if (common.client_observed_server_side_session_id != 0 &&
               tag.number == common.client_observed_server_side_session_id) {
      ReadOptionalId(reader, tag, &info.client_observed_server_side_session_id);
    } else if (!DecodeMethodField(method, reader, tag, &info)) {
      reader.SkipField(tag);  // unknown, or not traced (e.g. client_env)
    }
  }
  return info;
}

}  // namespace sparktrace::spark_connect
