// SparkConnectRequestDecoder: the requests of every method but ExecutePlan (reattach, release, config, ...).
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <string>

#include "spark/connect/base.pb.h"
#include "spark/connect/commands.pb.h"
#include "spark_connect/request_decoder.h"
#include "tests/unit/spark_connect/spark_connect_request_decoder_test_support.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

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

}  // namespace
}  // namespace sparktrace::spark_connect
