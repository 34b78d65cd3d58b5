#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "spark_connect/request_decoder.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"
#include "spark/connect/base.pb.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"

namespace sparktrace::spark_connect {
namespace {

namespace pb = ::spark::connect;

constexpr char kClientType[] = "_SPARK_CONNECT_PYTHON spark/4.0.0 os/linux python/3.11.2";

RequestInfo Decode(Method method, const std::string& bytes) { return DecodeRequestBytes(method, bytes); }

RequestInfo Decode(Method method, const google::protobuf::Message& message) {
  return Decode(method, message.SerializeAsString());
}

std::string Describe(const RequestInfo& info) {
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
void ExpectSameForEverySplit(Method method, const std::string& bytes) {
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

void SetUser(pb::UserContext* user) {
  user->set_user_id("etl");
  user->set_user_name("airflow");  // not traced
}

// A PySpark 4.0 `spark.sql("INSERT ...")`: sql_command with the 4.0 `input` relation,
// reattachable, with user tags and the server-side session echo.
pb::ExecutePlanRequest Spark40ExecutePlan() {
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
pb::ExecutePlanRequest Spark35ExecutePlan() {
  pb::ExecutePlanRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.mutable_plan()->mutable_root()->mutable_sql()->set_query("SELECT 1");
  request.mutable_plan()->mutable_root()->mutable_common()->set_plan_id(3);
  request.set_client_type("_SPARK_CONNECT_PYTHON spark/3.5.1");
  return request;
}

TEST(SparkConnectRequestDecoder, ExecutePlanSpark40EveryField) {
  const RequestInfo info = Decode(Method::kExecutePlan, Spark40ExecutePlan());
  EXPECT_EQ(info.method, Method::kExecutePlan);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.operation_id, kOperation);
  EXPECT_EQ(info.tags, (std::vector<std::string>{"airflow_dag=etl_daily", "airflow_task=load"}));
  EXPECT_EQ(info.dropped_tags, 0u);
  EXPECT_EQ(info.plan_kind, PlanKind::kCommand);
  EXPECT_FALSE(info.plan_compressed);
  EXPECT_EQ(info.command_kind, CommandKind::kSqlCommand);
  EXPECT_EQ(info.command_field, 5);
  EXPECT_EQ(info.root_relation_field, 0);
  EXPECT_EQ(info.reattachable, true);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
  // Nothing of other methods.
  EXPECT_FALSE(info.last_response_id.has_value());
  EXPECT_EQ(info.release_target, ReleaseTarget::kNone);
  EXPECT_EQ(info.config_operation, ConfigOperation::kNone);
}

TEST(SparkConnectRequestDecoder, ExecutePlanSpark35EveryField) {
  const RequestInfo info = Decode(Method::kExecutePlan, Spark35ExecutePlan());
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, "_SPARK_CONNECT_PYTHON spark/3.5.1");
  EXPECT_FALSE(info.operation_id.has_value());
  EXPECT_TRUE(info.tags.empty());
  EXPECT_EQ(info.plan_kind, PlanKind::kRoot);
  EXPECT_EQ(info.command_kind, CommandKind::kNone);
  EXPECT_EQ(info.root_relation_field, 10);  // Relation.sql
  EXPECT_FALSE(info.reattachable.has_value());
  EXPECT_FALSE(info.client_observed_server_side_session_id.has_value());
}

TEST(SparkConnectRequestDecoder, ExecutePlanSurvivesEverySliceSplit) {
  ExpectSameForEverySplit(Method::kExecutePlan, Spark40ExecutePlan().SerializeAsString());
  ExpectSameForEverySplit(Method::kExecutePlan, Spark35ExecutePlan().SerializeAsString());
}

TEST(SparkConnectRequestDecoder, EveryCommandOfTheCommandOneof) {
  const google::protobuf::OneofDescriptor* command_type =
      pb::Command::descriptor()->FindOneofByName("command_type");
  ASSERT_NE(command_type, nullptr);
  ASSERT_EQ(command_type->field_count(), 19);
  for (int i = 0; i < command_type->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = command_type->field(i);
    pb::ExecutePlanRequest request;
    request.set_session_id(kSession);
    pb::Command* command = request.mutable_plan()->mutable_command();
    command->GetReflection()->MutableMessage(command, field);
    const RequestInfo info = Decode(Method::kExecutePlan, request);
    EXPECT_EQ(info.status, DecodeStatus::kOk) << field->name();
    EXPECT_EQ(info.plan_kind, PlanKind::kCommand) << field->name();
    EXPECT_EQ(info.command_field, field->number()) << field->name();
    EXPECT_EQ(static_cast<int>(info.command_kind), field->number()) << field->name();
    EXPECT_EQ(CommandKindName(info.command_kind), field->name()) << field->name();
  }
}

TEST(SparkConnectRequestDecoder, SqlCommandInThe35Shape) {
  pb::ExecutePlanRequest request;
  request.mutable_plan()->mutable_command()->mutable_sql_command()->set_sql("SELECT 1");
  const RequestInfo info = Decode(Method::kExecutePlan, request);
  EXPECT_EQ(info.command_kind, CommandKind::kSqlCommand);
}

TEST(SparkConnectRequestDecoder, CommandNewerThanTheDecoderIsOther) {
  pb::ExecutePlanRequest request;
  pb::Command* command = request.mutable_plan()->mutable_command();
  // 4.1 adds command types after 18; a later one arrives as an unknown embedded message.
  command->GetReflection()->MutableUnknownFields(command)->AddLengthDelimited(19, "\x08\x01");
  const RequestInfo info = Decode(Method::kExecutePlan, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.plan_kind, PlanKind::kCommand);
  EXPECT_EQ(info.command_kind, CommandKind::kOther);
  EXPECT_EQ(info.command_field, 19);
  EXPECT_EQ(CommandKindName(info.command_kind), "other");
}

TEST(SparkConnectRequestDecoder, CompressedPlanOf41) {
  pb::ExecutePlanRequest request;
  auto* compressed = request.mutable_plan()->mutable_compressed_operation();
  compressed->set_data(std::string(500, '\xfe'));
  compressed->set_op_type(pb::Plan::CompressedOperation::OP_TYPE_COMMAND);
  compressed->set_compression_codec(pb::COMPRESSION_CODEC_ZSTD);
  RequestInfo info = Decode(Method::kExecutePlan, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.plan_kind, PlanKind::kCommand);
  EXPECT_TRUE(info.plan_compressed);
  EXPECT_EQ(info.command_kind, CommandKind::kNone);  // inside the compressed bytes

  compressed->set_op_type(pb::Plan::CompressedOperation::OP_TYPE_RELATION);
  info = Decode(Method::kExecutePlan, request);
  EXPECT_EQ(info.plan_kind, PlanKind::kRoot);
  EXPECT_TRUE(info.plan_compressed);
}

TEST(SparkConnectRequestDecoder, ReattachableFollowsSparksAnyOptionRule) {
  pb::ExecutePlanRequest request;
  request.add_request_options()->mutable_reattach_options()->set_reattachable(false);
  EXPECT_EQ(Decode(Method::kExecutePlan, request).reattachable, false);
  request.add_request_options()->mutable_extension()->set_type_url("type.googleapis.com/x.Y");
  EXPECT_EQ(Decode(Method::kExecutePlan, request).reattachable, false);
  request.add_request_options()->mutable_reattach_options()->set_reattachable(true);
  EXPECT_EQ(Decode(Method::kExecutePlan, request).reattachable, true);
  request.add_request_options()->mutable_reattach_options()->set_reattachable(false);
  EXPECT_EQ(Decode(Method::kExecutePlan, request).reattachable, true);

  pb::ExecutePlanRequest extension_only;
  extension_only.add_request_options()->mutable_extension();
  EXPECT_FALSE(Decode(Method::kExecutePlan, extension_only).reattachable.has_value());
}

TEST(SparkConnectRequestDecoder, TagsAndIdsAreBounded) {
  pb::ExecutePlanRequest request;
  for (std::size_t i = 0; i < kMaxCopiedRepeatedStrings + 6; ++i) {
    request.add_tags("tag" + std::to_string(i));
  }
  request.set_session_id(std::string(5000, 's'));
  const RequestInfo info = Decode(Method::kExecutePlan, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  ASSERT_EQ(info.tags.size(), kMaxCopiedRepeatedStrings);
  EXPECT_EQ(info.tags.front(), "tag0");
  EXPECT_EQ(info.tags.back(), "tag" + std::to_string(kMaxCopiedRepeatedStrings - 1));
  EXPECT_EQ(info.dropped_tags, 6u);
  EXPECT_EQ(info.session_id, std::string(kMaxCopiedStringBytes, 's'));
}

pb::ReattachExecuteRequest Spark40Reattach() {
  pb::ReattachExecuteRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_operation_id(kOperation);
  request.set_client_type(kClientType);
  request.set_last_response_id("7e1f0000-0000-4000-8000-000000000007");
  request.set_client_observed_server_side_session_id(kServerSession);
  return request;
}

TEST(SparkConnectRequestDecoder, ReattachExecuteEveryField) {
  const pb::ReattachExecuteRequest request = Spark40Reattach();
  const RequestInfo info = Decode(Method::kReattachExecute, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.operation_id, kOperation);
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.last_response_id, "7e1f0000-0000-4000-8000-000000000007");
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
  ExpectSameForEverySplit(Method::kReattachExecute, request.SerializeAsString());

  // 3.5, reattaching before any response was seen: no last_response_id, no session echo.
  pb::ReattachExecuteRequest spark35 = request;
  spark35.clear_last_response_id();
  spark35.clear_client_observed_server_side_session_id();
  const RequestInfo info35 = Decode(Method::kReattachExecute, spark35);
  EXPECT_EQ(info35.status, DecodeStatus::kOk);
  EXPECT_FALSE(info35.last_response_id.has_value());
  EXPECT_FALSE(info35.client_observed_server_side_session_id.has_value());
  EXPECT_EQ(info35.operation_id, kOperation);
}

TEST(SparkConnectRequestDecoder, ReleaseExecuteTargets) {
  pb::ReleaseExecuteRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_operation_id(kOperation);
  request.set_client_type(kClientType);
  request.set_client_observed_server_side_session_id(kServerSession);

  RequestInfo info = Decode(Method::kReleaseExecute, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.release_target, ReleaseTarget::kNone);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.operation_id, kOperation);
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);

  request.mutable_release_until()->set_response_id("resp-41");
  info = Decode(Method::kReleaseExecute, request);
  EXPECT_EQ(info.release_target, ReleaseTarget::kUntil);
  EXPECT_EQ(info.release_until_response_id, "resp-41");
  ExpectSameForEverySplit(Method::kReleaseExecute, request.SerializeAsString());

  request.mutable_release_all();
  info = Decode(Method::kReleaseExecute, request);
  EXPECT_EQ(info.release_target, ReleaseTarget::kAll);
  EXPECT_EQ(info.release_until_response_id, "");
  EXPECT_EQ(ReleaseTargetName(info.release_target), "all");
}

TEST(SparkConnectRequestDecoder, InterruptTargets) {
  pb::InterruptRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_client_type(kClientType);
  request.set_client_observed_server_side_session_id(kServerSession);
  request.set_interrupt_type(pb::InterruptRequest::INTERRUPT_TYPE_ALL);
  RequestInfo info = Decode(Method::kInterrupt, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
  EXPECT_EQ(info.interrupt_type, InterruptType::kAll);
  EXPECT_FALSE(info.interrupt_operation_tag.has_value());
  EXPECT_FALSE(info.interrupt_operation_id.has_value());
  EXPECT_FALSE(info.operation_id.has_value());  // an interrupt belongs to no operation itself

  request.set_interrupt_type(pb::InterruptRequest::INTERRUPT_TYPE_TAG);
  request.set_operation_tag("airflow_task=load");
  info = Decode(Method::kInterrupt, request);
  EXPECT_EQ(info.interrupt_type, InterruptType::kTag);
  EXPECT_EQ(info.interrupt_operation_tag, "airflow_task=load");
  EXPECT_FALSE(info.interrupt_operation_id.has_value());
  ExpectSameForEverySplit(Method::kInterrupt, request.SerializeAsString());

  request.set_interrupt_type(pb::InterruptRequest::INTERRUPT_TYPE_OPERATION_ID);
  request.set_operation_id(kOperation);
  info = Decode(Method::kInterrupt, request);
  EXPECT_EQ(info.interrupt_type, InterruptType::kOperationId);
  EXPECT_EQ(info.interrupt_operation_id, kOperation);
  EXPECT_FALSE(info.interrupt_operation_tag.has_value());
  EXPECT_EQ(InterruptTypeName(info.interrupt_type), "operation_id");

  request.set_interrupt_type(static_cast<pb::InterruptRequest::InterruptType>(9));
  EXPECT_EQ(Decode(Method::kInterrupt, request).interrupt_type, InterruptType::kOther);
}

TEST(SparkConnectRequestDecoder, EveryConfigOperationButNeverKeysOrValues) {
  const google::protobuf::OneofDescriptor* op_type =
      pb::ConfigRequest::Operation::descriptor()->FindOneofByName("op_type");
  ASSERT_EQ(op_type->field_count(), 7);
  for (int i = 0; i < op_type->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = op_type->field(i);
    pb::ConfigRequest request;
    request.set_session_id(kSession);
    SetUser(request.mutable_user_context());
    request.set_client_type(kClientType);
    request.set_client_observed_server_side_session_id(kServerSession);
    pb::ConfigRequest::Operation* operation = request.mutable_operation();
    operation->GetReflection()->MutableMessage(operation, field);
    const RequestInfo info = Decode(Method::kConfig, request);
    EXPECT_EQ(info.status, DecodeStatus::kOk) << field->name();
    EXPECT_EQ(static_cast<int>(info.config_operation), field->number()) << field->name();
    EXPECT_EQ(info.config_operation_field, field->number());
    EXPECT_EQ(ConfigOperationName(info.config_operation), field->name());
    EXPECT_EQ(info.session_id, kSession);
    EXPECT_EQ(info.user_id, "etl");
    EXPECT_EQ(info.client_type, kClientType);
    EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
  }

  pb::ConfigRequest set;
  set.set_session_id(kSession);
  pb::KeyValue* pair = set.mutable_operation()->mutable_set()->add_pairs();
  pair->set_key("spark.hadoop.fs.s3a.secret.key");
  pair->set_value("AKIA-SECRET-VALUE");
  const std::string bytes = set.SerializeAsString();
  const RequestInfo info = Decode(Method::kConfig, bytes);
  EXPECT_EQ(info.config_operation, ConfigOperation::kSet);
  EXPECT_EQ(Describe(info).find("SECRET"), std::string::npos) << Describe(info);
  EXPECT_EQ(Describe(info).find("secret"), std::string::npos) << Describe(info);
  ExpectSameForEverySplit(Method::kConfig, bytes);
}

TEST(SparkConnectRequestDecoder, ConfigOperationNewerThanTheDecoderIsOther) {
  pb::ConfigRequest request;
  pb::ConfigRequest::Operation* operation = request.mutable_operation();
  operation->GetReflection()->MutableUnknownFields(operation)->AddLengthDelimited(8, "");
  const RequestInfo info = Decode(Method::kConfig, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.config_operation, ConfigOperation::kOther);
  EXPECT_EQ(info.config_operation_field, 8);
}

TEST(SparkConnectRequestDecoder, EveryAnalyzeKind) {
  const google::protobuf::OneofDescriptor* analyze =
      pb::AnalyzePlanRequest::descriptor()->FindOneofByName("analyze");
  ASSERT_EQ(analyze->field_count(), 14);
  for (int i = 0; i < analyze->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = analyze->field(i);
    pb::AnalyzePlanRequest request;
    request.set_session_id(kSession);
    SetUser(request.mutable_user_context());
    request.set_client_type(kClientType);
    request.set_client_observed_server_side_session_id(kServerSession);
    request.GetReflection()->MutableMessage(&request, field);
    const RequestInfo info = Decode(Method::kAnalyzePlan, request);
    EXPECT_EQ(info.status, DecodeStatus::kOk) << field->name();
    EXPECT_EQ(static_cast<int>(info.analyze_kind), field->number()) << field->name();
    EXPECT_EQ(AnalyzeKindName(info.analyze_kind), field->name());
    EXPECT_EQ(info.session_id, kSession);
    EXPECT_EQ(info.user_id, "etl");
    EXPECT_EQ(info.client_type, kClientType);
    EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
    EXPECT_EQ(info.plan_kind, PlanKind::kNone);  // the analyzed plan is not traced
  }
  pb::AnalyzePlanRequest explain;
  explain.mutable_explain()->mutable_plan()->mutable_root()->mutable_sql()->set_query("SELECT 1");
  explain.mutable_explain()->set_explain_mode(pb::AnalyzePlanRequest::Explain::EXPLAIN_MODE_FORMATTED);
  ExpectSameForEverySplit(Method::kAnalyzePlan, explain.SerializeAsString());
}

TEST(SparkConnectRequestDecoder, AddArtifactsPayloads) {
  pb::AddArtifactsRequest request;
  request.set_session_id(kSession);
  SetUser(request.mutable_user_context());
  request.set_client_type(kClientType);  // field 6 here
  request.set_client_observed_server_side_session_id(kServerSession);
  auto* artifact = request.mutable_batch()->add_artifacts();
  artifact->set_name("pyfiles/job.py");
  artifact->mutable_data()->set_data(std::string(3000, 'p'));
  RequestInfo info = Decode(Method::kAddArtifacts, request);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.artifact_payload, ArtifactPayload::kBatch);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);

  request.mutable_begin_chunk()->set_name("jars/big.jar");
  EXPECT_EQ(Decode(Method::kAddArtifacts, request).artifact_payload, ArtifactPayload::kBeginChunk);
  request.mutable_chunk()->set_data("more");
  EXPECT_EQ(Decode(Method::kAddArtifacts, request).artifact_payload, ArtifactPayload::kChunk);
  EXPECT_EQ(ArtifactPayloadName(ArtifactPayload::kChunk), "chunk");
}

TEST(SparkConnectRequestDecoder, ArtifactStatusReleaseSessionFetchErrorDetails) {
  pb::ArtifactStatusesRequest statuses;
  statuses.set_session_id(kSession);
  SetUser(statuses.mutable_user_context());
  statuses.set_client_type(kClientType);
  statuses.add_names("jars/a.jar");
  statuses.set_client_observed_server_side_session_id(kServerSession);
  RequestInfo info = Decode(Method::kArtifactStatus, statuses);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);

  pb::ReleaseSessionRequest release;
  release.set_session_id(kSession);
  SetUser(release.mutable_user_context());
  release.set_client_type(kClientType);
  release.set_allow_reconnect(true);
  info = Decode(Method::kReleaseSession, release);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_TRUE(info.allow_reconnect);
  EXPECT_FALSE(info.client_observed_server_side_session_id.has_value());

  pb::FetchErrorDetailsRequest fetch;
  fetch.set_session_id(kSession);
  SetUser(fetch.mutable_user_context());
  fetch.set_error_id("err-0001");
  fetch.set_client_type(kClientType);
  fetch.set_client_observed_server_side_session_id(kServerSession);
  info = Decode(Method::kFetchErrorDetails, fetch);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.error_id, "err-0001");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
  ExpectSameForEverySplit(Method::kFetchErrorDetails, fetch.SerializeAsString());
}

TEST(SparkConnectRequestDecoder, CloneSessionAndGetStatusCommonFields) {
  pb::CloneSessionRequest clone;
  clone.set_session_id(kSession);
  SetUser(clone.mutable_user_context());
  clone.set_client_type(kClientType);
  clone.set_new_session_id("new-session");
  clone.set_client_observed_server_side_session_id(kServerSession);
  RequestInfo info = Decode(Method::kCloneSession, clone);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);

  pb::GetStatusRequest status;
  status.set_session_id(kSession);
  SetUser(status.mutable_user_context());
  status.set_client_type(kClientType);
  status.set_client_observed_server_side_session_id(kServerSession);
  status.mutable_operation_status()->add_operation_ids(kOperation);
  info = Decode(Method::kGetStatus, status);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.client_type, kClientType);
  EXPECT_EQ(info.client_observed_server_side_session_id, kServerSession);
}

TEST(SparkConnectRequestDecoder, UnknownMethodIsNotDecoded) {
  const RequestInfo info = Decode(Method::kUnknown, Spark40ExecutePlan());
  EXPECT_EQ(info.status, DecodeStatus::kNotDecoded);
  EXPECT_FALSE(IsDecodeFailure(info.status));
  EXPECT_TRUE(info == RequestInfo{});
}

// Unknown fields of every wire type, at the top and inside every message the decoder enters.
void AddUnknownFields(google::protobuf::Message* message) {
  google::protobuf::UnknownFieldSet* unknown = message->GetReflection()->MutableUnknownFields(message);
  unknown->AddVarint(1000, 12345);
  unknown->AddFixed32(1001, 7);
  unknown->AddFixed64(1002, 9);
  unknown->AddLengthDelimited(1003, "client_env-like payload");
  google::protobuf::UnknownFieldSet* group = unknown->AddGroup(1004);
  group->AddVarint(1, 1);
  group->AddGroup(2)->AddLengthDelimited(3, "x");
}

TEST(SparkConnectRequestDecoder, IgnoresUnknownFieldsEverywhere) {
  pb::ExecutePlanRequest request = Spark40ExecutePlan();
  const RequestInfo expected = Decode(Method::kExecutePlan, request);
  AddUnknownFields(&request);
  AddUnknownFields(request.mutable_user_context());
  AddUnknownFields(request.mutable_plan());
  AddUnknownFields(request.mutable_plan()->mutable_command());
  AddUnknownFields(request.mutable_request_options(0));
  AddUnknownFields(request.mutable_request_options(0)->mutable_reattach_options());
  // A client_env (field 9) seen in one unreleased Spark revision is just another unknown field.
  request.GetReflection()->MutableUnknownFields(&request)->AddLengthDelimited(9,
                                                                              "\x0a\x05"
                                                                              "4.1.0");
  const std::string bytes = request.SerializeAsString();
  const RequestInfo info = Decode(Method::kExecutePlan, bytes);
  EXPECT_TRUE(info == expected) << Describe(info) << "\n" << Describe(expected);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  ExpectSameForEverySplit(Method::kExecutePlan, bytes);

  pb::ReleaseExecuteRequest release;
  release.set_operation_id(kOperation);
  release.mutable_release_until()->set_response_id("r1");
  AddUnknownFields(release.mutable_release_until());
  AddUnknownFields(release.mutable_user_context());
  const RequestInfo release_info = Decode(Method::kReleaseExecute, release);
  EXPECT_EQ(release_info.status, DecodeStatus::kOk);
  EXPECT_EQ(release_info.release_until_response_id, "r1");
}

// ---- Repeated occurrences: the decoder must agree with protobuf's own parser ----------------

// What RequestInfo should say for an ExecutePlanRequest, computed from protobuf's parse.
RequestInfo ExpectedFor(const pb::ExecutePlanRequest& request) {
  RequestInfo info;
  info.method = Method::kExecutePlan;
  info.status = DecodeStatus::kOk;
  info.session_id = request.session_id();
  info.user_id = request.user_context().user_id();
  if (request.has_client_type()) info.client_type = request.client_type();
  if (request.has_client_observed_server_side_session_id()) {
    info.client_observed_server_side_session_id = request.client_observed_server_side_session_id();
  }
  if (request.has_operation_id()) info.operation_id = request.operation_id();
  info.tags.assign(request.tags().begin(), request.tags().end());
  if (request.plan().has_root()) {
    info.plan_kind = PlanKind::kRoot;
    info.root_relation_field = request.plan().root().has_sql() ? 10 : 0;
  } else if (request.plan().has_command()) {
    info.plan_kind = PlanKind::kCommand;
    const pb::Command& command = request.plan().command();
    const auto* field =
        command.GetReflection()->GetOneofFieldDescriptor(command, pb::Command::descriptor()->oneof_decl(0));
    info.command_field = field == nullptr ? 0 : field->number();
    info.command_kind = static_cast<CommandKind>(info.command_field);
  }
  for (const auto& option : request.request_options()) {
    if (option.has_reattach_options()) {
      info.reattachable = info.reattachable.value_or(false) || option.reattach_options().reattachable();
    }
  }
  return info;
}

TEST(SparkConnectRequestDecoder, ConcatenatedMessagesMergeLikeProtobuf) {
  // Variants whose concatenation exercises last-wins scalars, merged sub-messages, oneof member
  // switches (root ↔ command, command A ↔ command B) and repeated fields.
  std::vector<pb::ExecutePlanRequest> variants(6);
  variants[0] = Spark40ExecutePlan();
  variants[1] = Spark35ExecutePlan();
  variants[2].mutable_plan()->mutable_command()->mutable_write_operation();
  variants[2].set_operation_id("op-2");
  variants[2].add_tags("t2");
  variants[3].mutable_user_context()->set_user_name("only-name");
  variants[3].mutable_plan()->mutable_root()->mutable_common()->set_plan_id(1);
  variants[3].add_request_options()->mutable_reattach_options();
  variants[4].set_session_id("s4");
  variants[4].mutable_plan()->mutable_command();  // an empty command: kind set, no type
  variants[5].mutable_plan()->mutable_command()->mutable_sql_command()->set_sql("x");
  variants[5].set_client_type("");
  for (std::size_t a = 0; a < variants.size(); ++a) {
    for (std::size_t b = 0; b < variants.size(); ++b) {
      const std::string bytes = variants[a].SerializeAsString() + variants[b].SerializeAsString();
      pb::ExecutePlanRequest parsed;
      ASSERT_TRUE(parsed.ParseFromString(bytes));
      const RequestInfo expected = ExpectedFor(parsed);
      const RequestInfo info = Decode(Method::kExecutePlan, bytes);
      EXPECT_TRUE(info == expected) << a << "+" << b << "\n decoded:  " << Describe(info)
                                    << "\n protobuf: " << Describe(expected);
    }
  }
}

TEST(SparkConnectRequestDecoder, OneofSwitchesInReleaseAndInterruptMatchProtobuf) {
  pb::ReleaseExecuteRequest until;
  until.mutable_release_until()->set_response_id("r9");
  pb::ReleaseExecuteRequest all;
  all.mutable_release_all();
  RequestInfo info = Decode(Method::kReleaseExecute, until.SerializeAsString() + all.SerializeAsString());
  EXPECT_EQ(info.release_target, ReleaseTarget::kAll);
  EXPECT_EQ(info.release_until_response_id, "");
  info = Decode(Method::kReleaseExecute, all.SerializeAsString() + until.SerializeAsString());
  EXPECT_EQ(info.release_target, ReleaseTarget::kUntil);
  EXPECT_EQ(info.release_until_response_id, "r9");

  pb::InterruptRequest by_tag;
  by_tag.set_operation_tag("t");
  pb::InterruptRequest by_id;
  by_id.set_operation_id("o");
  info = Decode(Method::kInterrupt, by_tag.SerializeAsString() + by_id.SerializeAsString());
  EXPECT_FALSE(info.interrupt_operation_tag.has_value());
  EXPECT_EQ(info.interrupt_operation_id, "o");
}

}  // namespace
}  // namespace sparktrace::spark_connect
