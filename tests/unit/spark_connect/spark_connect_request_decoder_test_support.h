#pragma once
// Shared by the Spark Connect request decoder tests: decodes of a message or its bytes, a one-line
// description of what was decoded, the check that every cut into slices decodes the same, and the
// ExecutePlan requests a PySpark 4.0 and a Spark 3.5 client send.

#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <string_view>

#include "spark/connect/base.pb.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"
#include "spark_connect/request_decoder.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {

namespace pb = ::spark::connect;

inline constexpr char kClientType[] = "_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux python/3.11.2";

inline RequestInfo Decode(Method method, const std::string& bytes) {
  return DecodeRequestBytes(method, bytes);
}

inline RequestInfo Decode(Method method, const google::protobuf::Message& message) {
  return Decode(method, message.SerializeAsString());
}

inline std::string Describe(const RequestInfo& info) {
  std::ostringstream out;
  out << "method=" << MethodName(info.method) << " status=" << DecodeStatusName(info.status)
      << " session=" << info.session_id << " user=" << info.user_id
      << " client_type=" << info.client_type.value_or("<none>")
      << " observed=" << info.client_observed_server_side_session_id.value_or("<none>")
      << " operation=" << info.operation_id.value_or("<none>") << " tags=" << info.tags.size() << "+"
      << info.dropped_tags << " plan=" << PlanKindName(info.plan_kind)
      << (info.plan_compressed ? "(compressed)" : "") << " command=" << CommandKindName(info.command_kind)
      << "/" << info.command_field << " relation=" << info.root_relation_field
      << " reattachable=" << (info.reattachable ? (*info.reattachable ? "true" : "false") : "<none>")
      << " last_response=" << info.last_response_id.value_or("<none>")
      << " release=" << ReleaseTargetName(info.release_target) << "/" << info.release_until_response_id
      << " interrupt=" << InterruptTypeName(info.interrupt_type) << "/"
      << info.interrupt_operation_tag.value_or("<none>") << "/"
      << info.interrupt_operation_id.value_or("<none>")
      << " config=" << ConfigOperationName(info.config_operation) << "/" << info.config_operation_field
      << " analyze=" << AnalyzeKindName(info.analyze_kind)
      << " artifact=" << ArtifactPayloadName(info.artifact_payload) << " error_id=" << info.error_id
      << " allow_reconnect=" << info.allow_reconnect;
  return out.str();
}

// Decodes `bytes` cut into three slices at every pair of offsets i <= j (which includes every
// two-slice cut, with an empty slice first, in the middle or last) and expects the result of the
// contiguous decode each time.
inline void ExpectSameForEverySplit(Method method, const std::string& bytes) {
  const RequestInfo whole = Decode(method, bytes);
  const std::string_view view(bytes);
  for (std::size_t i = 0; i <= view.size(); ++i) {
    for (std::size_t j = i; j <= view.size(); ++j) {
      const std::array<ByteSlice, 3> slices = {AsSlice(view.substr(0, i)), AsSlice(view.substr(i, j - i)),
                                               AsSlice(view.substr(j))};
      const RequestInfo split = DecodeRequest(method, slices);
      ASSERT_TRUE(split == whole) << "cut at " << i << "," << j << "\n split: " << Describe(split)
                                  << "\n whole: " << Describe(whole);
    }
  }
}

inline void SetUser(pb::UserContext* user) {
  user->set_user_id("etl");
  user->set_user_name("airflow");  // not traced
}

// A PySpark 4.0 `spark.sql("INSERT ...")`: sql_command with the 4.0 `input` relation,
// reattachable, with user tags and the server-side session echo.
inline pb::ExecutePlanRequest Spark40ExecutePlan() {
  pb::ExecutePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.mutable_plan()->mutable_command()->mutable_sql_command()->mutable_input()->mutable_sql()->set_query(
      "INSERT INTO t SELECT * FROM s");
  request.set_client_type(kClientType);
  request.add_request_options()->mutable_reattach_options()->set_reattachable(true);
  request.set_operation_id(kOperation);
  request.add_tags("airflow_dag=etl_daily");
  request.add_tags("airflow_task=load");
  request.set_client_observed_server_side_session_id(kServerSession);
  return request;
}

// A Spark 3.5 client's `df.collect()` without reattach options: a root relation, no operation id
// (the server picks one), none of the 4.0 fields.
inline pb::ExecutePlanRequest Spark35ExecutePlan() {
  pb::ExecutePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.mutable_plan()->mutable_root()->mutable_sql()->set_query("SELECT 1");
  request.mutable_plan()->mutable_root()->mutable_common()->set_plan_id(3);
  request.set_client_type("_SPARK_CONNECT_PYTHON spark/3.5.1");
  return request;
}

}  // namespace sparktrace::spark_connect
