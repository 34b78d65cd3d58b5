// SparkConnectRequestDecoder: ExecutePlan requests, unknown fields, repeated fields merged as protobuf does.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "spark/connect/base.pb.h"
#include "spark/connect/commands.pb.h"
#include "spark/connect/relations.pb.h"
#include "spark_connect/request_decoder.h"
#include "tests/unit/spark_connect/spark_connect_request_decoder_test_support.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

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
