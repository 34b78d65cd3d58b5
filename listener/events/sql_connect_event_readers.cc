// Readers of the SQL execution and Spark Connect events: Jackson-serialised classes, so camelCase
// keys and null for an absent Option. Of a SQL execution, its description (cut) and its plan's
// operators (sql_plan_readers.cc) are read; physical plan descriptions, details (call sites),
// statement text, modified configurations and user-supplied tags are never decoded.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "listener/events/event_readers.h"

namespace sparktrace::listener::events::json {
namespace {

error_code ReadStringArray(ondemand::value& value, std::optional<std::vector<std::string>>& out) {
  bool is_null = false;
  if (error_code error = ConsumeNull(value, is_null)) return error;
  if (is_null) {
    out.reset();
    return simdjson::SUCCESS;
  }
  std::vector<std::string>& strings = out.emplace();
  return VisitArray(value, [&](ondemand::value& element) -> error_code {
    return ReadString(element, strings.emplace_back());
  });
}

}  // namespace

error_code ReadSqlExecutionStart(FieldRange fields, ReadFailure& failure, std::size_t max_plan_nodes,
                                 SqlExecutionStart& out) {
  bool has_execution_id = false;
  bool has_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "executionId") {
              has_execution_id = true;
              return ReadInt64(value, out.execution_id);
            }
            if (key == "time") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "rootExecutionId") return ReadOptionalInt64(value, out.root_execution_id);
            if (key == "jobTags") return ReadStringArray(value, out.job_tags);
            if (key == "jobGroupId") return ReadOptionalString(value, out.job_group_id);
            if (key == "description") {
              bool is_null = false;
              if (error_code error = ConsumeNull(value, is_null)) return error;
              if (is_null) return simdjson::SUCCESS;
              std::string_view text;
              if (error_code error = value.get_string().get(text)) return error;
              out.description.assign(Utf8Prefix(text, kMaxSqlDescriptionBytes));
              return simdjson::SUCCESS;
            }
            if (key == "sparkPlanInfo") {
              if (max_plan_nodes == 0) return simdjson::SUCCESS;  // not wanted: skipped undecoded
              bool is_null = false;
              if (error_code error = ConsumeNull(value, is_null)) return error;
              if (is_null) return simdjson::SUCCESS;
              return ReadSparkPlanInfo(value, failure, max_plan_nodes, out.plan.emplace());
            }
            return simdjson::SUCCESS;  // details, physicalPlanDescription, modifiedConfigs, ...
          })) {
    return visit_error;
  }
  if (!has_execution_id) return Missing(failure, "executionId");
  if (!has_time) return Missing(failure, "time");
  return simdjson::SUCCESS;
}

error_code ReadSqlExecutionEnd(FieldRange fields, ReadFailure& failure, SqlExecutionEnd& out) {
  bool has_execution_id = false;
  bool has_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "executionId") {
              has_execution_id = true;
              return ReadInt64(value, out.execution_id);
            }
            if (key == "time") {
              has_time = true;
              return ReadInt64(value, out.time_ms);
            }
            if (key == "errorMessage") return ReadOptionalMessage(value, out.error_message);
            return simdjson::SUCCESS;
          })) {
    return visit_error;
  }
  if (!has_execution_id) return Missing(failure, "executionId");
  if (!has_time) return Missing(failure, "time");
  return simdjson::SUCCESS;
}

error_code ReadConnectSessionEvent(FieldRange fields, ReadFailure& failure, ConnectSessionEvent& out) {
  bool has_session_id = false;
  bool has_event_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "sessionId") {
              has_session_id = true;
              return ReadString(value, out.session_id);
            }
            if (key == "eventTime") {
              has_event_time = true;
              return ReadInt64(value, out.event_time_ms);
            }
            if (key == "userId") return ReadString(value, out.user_id);
            return simdjson::SUCCESS;  // extraTags
          })) {
    return visit_error;
  }
  if (!has_session_id) return Missing(failure, "sessionId");
  if (!has_event_time) return Missing(failure, "eventTime");
  return simdjson::SUCCESS;
}

error_code ReadConnectOperationEvent(FieldRange fields, ReadFailure& failure, ConnectOperationEvent& out) {
  bool has_job_tag = false;
  bool has_operation_id = false;
  bool has_event_time = false;
  if (error_code visit_error =
          VisitFields(fields, failure, [&](std::string_view key, ondemand::value& value) -> error_code {
            if (key == "jobTag") {
              has_job_tag = true;
              return ReadString(value, out.job_tag);
            }
            if (key == "operationId") {
              has_operation_id = true;
              return ReadString(value, out.operation_id);
            }
            if (key == "eventTime") {
              has_event_time = true;
              return ReadInt64(value, out.event_time_ms);
            }
            if (key == "sessionId") return ReadString(value, out.session_id);
            if (key == "userId") return ReadString(value, out.user_id);
            if (key == "producedRowCount") return ReadOptionalInt64(value, out.produced_row_count);
            if (key == "errorMessage") {
              std::optional<std::string> message;
              if (error_code error = ReadOptionalMessage(value, message)) return error;
              out.error_message = std::move(message).value_or("");
            }
            return simdjson::SUCCESS;  // statementText, userName, sparkSessionTags, extraTags
          })) {
    return visit_error;
  }
  if (!has_job_tag) return Missing(failure, "jobTag");
  if (!has_operation_id) return Missing(failure, "operationId");
  if (!has_event_time) return Missing(failure, "eventTime");
  return simdjson::SUCCESS;
}

}  // namespace sparktrace::listener::events::json
