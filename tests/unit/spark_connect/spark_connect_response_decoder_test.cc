#include <google/protobuf/descriptor.h>
#include <google/protobuf/unknown_field_set.h>
#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "spark/connect/base.pb.h"
#include "spark_connect/response_decoder.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

namespace pb = ::spark::connect;

constexpr char kResponse[] = "0f0e0d0c-0b0a-4908-8706-050403020100";

ResponseInfo DecodeOneResponse(Method method, const std::string& bytes) {
  return DecodeResponseBytes(method, bytes);
}

ResponseInfo DecodeOneResponse(Method method, const google::protobuf::Message& message) {
  return DecodeOneResponse(method, message.SerializeAsString());
}

std::string Describe(const ResponseInfo& info) {
  std::ostringstream out;
  out << "method=" << MethodName(info.method) << " status=" << DecodeStatusName(info.status)
      << " session=" << info.session_id << " server_session=" << info.server_side_session_id
      << " operation=" << info.operation_id << " response=" << info.response_id
      << " kind=" << ResponseKindName(info.kind) << " rows=" << info.arrow_row_count
      << " bytes=" << info.arrow_data_bytes
      << " start=" << (info.arrow_start_offset ? *info.arrow_start_offset : -1)
      << " stages=" << info.stages.size() << "+" << info.dropped_stages
      << " inflight=" << info.num_inflight_tasks << " metrics=" << info.has_metrics
      << " observed=" << info.observed_metrics_count << " schema=" << info.has_schema
      << " interrupted=" << info.interrupted_ids.size() << "+" << info.dropped_interrupted_ids;
  for (const StageProgress& stage : info.stages) {
    out << " [stage " << stage.stage_id << " " << stage.num_completed_tasks << "/" << stage.num_tasks << " "
        << stage.input_bytes_read << "B" << (stage.done ? " done" : "") << "]";
  }
  return out.str();
}

void ExpectSameResponseForEverySplit(Method method, const std::string& bytes) {
  const ResponseInfo whole = DecodeOneResponse(method, bytes);
  const std::string_view view(bytes);
  for (std::size_t i = 0; i <= view.size(); ++i) {
    for (std::size_t j = i; j <= view.size(); ++j) {
      const std::array<ByteSlice, 3> slices = {AsSlice(view.substr(0, i)), AsSlice(view.substr(i, j - i)),
                                               AsSlice(view.substr(j))};
      const ResponseInfo split = DecodeResponse(method, slices);
      ASSERT_TRUE(split == whole) << "cut at " << i << "," << j << "\n split: " << Describe(split)
                                  << "\n whole: " << Describe(whole);
    }
  }
}

void SetIds(pb::ExecutePlanResponse* response, bool spark40) {
  response->set_session_id(kSession);
  response->set_operation_id(kOperation);
  response->set_response_id(kResponse);
  if (spark40) {
    response->set_server_side_session_id(kServerSession);
  }
}

pb::ExecutePlanResponse ArrowResponse(std::size_t data_bytes, bool spark40) {
  pb::ExecutePlanResponse response;
  SetIds(&response, spark40);
  pb::ExecutePlanResponse::ArrowBatch* batch = response.mutable_arrow_batch();
  batch->set_row_count(123456789012LL);
  batch->set_data(std::string(data_bytes, '\xAB'));
  if (spark40) {
    batch->set_start_offset(4096);
  }
  return response;
}

TEST(SparkConnectResponseDecoder, ArrowBatchSpark40EveryField) {
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, ArrowResponse(1 << 20, true));
  EXPECT_EQ(info.method, Method::kExecutePlan);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.server_side_session_id, kServerSession);
  EXPECT_EQ(info.operation_id, kOperation);
  EXPECT_EQ(info.response_id, kResponse);
  EXPECT_EQ(info.kind, ResponseKind::kArrowBatch);
  EXPECT_EQ(info.arrow_row_count, 123456789012LL);
  EXPECT_EQ(info.arrow_data_bytes, 1u << 20);
  EXPECT_EQ(info.arrow_start_offset, 4096);
  EXPECT_TRUE(info.stages.empty());
  EXPECT_FALSE(info.has_metrics);
  EXPECT_FALSE(info.has_schema);
}

TEST(SparkConnectResponseDecoder, ArrowBatchSpark35HasNoFourZeroFields) {
  const ResponseInfo info = DecodeOneResponse(Method::kReattachExecute, ArrowResponse(100, false));
  EXPECT_EQ(info.method, Method::kReattachExecute);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.server_side_session_id, "");
  EXPECT_EQ(info.kind, ResponseKind::kArrowBatch);
  EXPECT_EQ(info.arrow_row_count, 123456789012LL);
  EXPECT_EQ(info.arrow_data_bytes, 100u);
  EXPECT_FALSE(info.arrow_start_offset.has_value());
}

TEST(SparkConnectResponseDecoder, ArrowBatchSurvivesEverySliceSplit) {
  ExpectSameResponseForEverySplit(Method::kExecutePlan, ArrowResponse(40, true).SerializeAsString());
  ExpectSameResponseForEverySplit(Method::kExecutePlan, ArrowResponse(0, false).SerializeAsString());
}

TEST(SparkConnectResponseDecoder, LargeArrowBatchSplitInsideTheData) {
  // As gRPC hands over a large message: many slices, the data straddling all of them.
  const std::string bytes = ArrowResponse(4 << 20, true).SerializeAsString();
  const ResponseInfo whole = DecodeOneResponse(Method::kExecutePlan, bytes);
  for (std::size_t slice_size : {1u << 10, 8u << 10, 1u << 20, 3u << 20}) {
    std::vector<ByteSlice> slices;
    for (std::size_t offset = 0; offset < bytes.size(); offset += slice_size) {
      slices.push_back(AsSlice(std::string_view(bytes).substr(offset, slice_size)));
    }
    const ResponseInfo split = DecodeResponse(Method::kExecutePlan, slices);
    EXPECT_TRUE(split == whole) << slice_size << ": " << Describe(split);
  }
  EXPECT_EQ(whole.arrow_data_bytes, 4u << 20);
}

pb::ExecutePlanResponse ProgressResponse() {
  pb::ExecutePlanResponse response;
  SetIds(&response, true);
  pb::ExecutePlanResponse::ExecutionProgress* progress = response.mutable_execution_progress();
  for (int i = 0; i < 3; ++i) {
    pb::ExecutePlanResponse::ExecutionProgress::StageInfo* stage = progress->add_stages();
    stage->set_stage_id(10 + i);
    stage->set_num_tasks(200);
    stage->set_num_completed_tasks(50LL * i);
    stage->set_input_bytes_read((1LL << 40) + i);
    stage->set_done(i == 2);
  }
  progress->set_num_inflight_tasks(17);
  return response;
}

TEST(SparkConnectResponseDecoder, ExecutionProgressEveryField) {
  const pb::ExecutePlanResponse response = ProgressResponse();
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, response);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.kind, ResponseKind::kExecutionProgress);
  EXPECT_EQ(info.operation_id, kOperation);
  ASSERT_EQ(info.stages.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(info.stages[i].stage_id, 10 + i);
    EXPECT_EQ(info.stages[i].num_tasks, 200);
    EXPECT_EQ(info.stages[i].num_completed_tasks, 50 * i);
    EXPECT_EQ(info.stages[i].input_bytes_read, (1LL << 40) + i);
    EXPECT_EQ(info.stages[i].done, i == 2);
  }
  EXPECT_EQ(info.num_inflight_tasks, 17);
  EXPECT_EQ(info.dropped_stages, 0u);
  ExpectSameResponseForEverySplit(Method::kExecutePlan, response.SerializeAsString());
}

TEST(SparkConnectResponseDecoder, StagesAreBounded) {
  pb::ExecutePlanResponse response;
  for (std::size_t i = 0; i < kMaxDecodedStages + 10; ++i) {
    response.mutable_execution_progress()->add_stages()->set_stage_id(static_cast<std::int64_t>(i));
  }
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, response);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  ASSERT_EQ(info.stages.size(), kMaxDecodedStages);
  EXPECT_EQ(info.stages.back().stage_id, static_cast<std::int64_t>(kMaxDecodedStages - 1));
  EXPECT_EQ(info.dropped_stages, 10u);
}

TEST(SparkConnectResponseDecoder, ResultCompleteWithMetricsObservedMetricsAndSchema) {
  pb::ExecutePlanResponse response;
  SetIds(&response, true);
  response.mutable_result_complete();
  auto* metric = response.mutable_metrics()->add_metrics();
  metric->set_name("HashAggregate");
  (*metric->mutable_execution_metrics())["numOutputRows"].set_value(5);
  response.add_observed_metrics()->set_name("a");
  response.add_observed_metrics()->set_name("b");
  response.mutable_schema();
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, response);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.kind, ResponseKind::kResultComplete);
  EXPECT_TRUE(info.has_metrics);
  EXPECT_EQ(info.observed_metrics_count, 2u);
  EXPECT_TRUE(info.has_schema);
  EXPECT_EQ(info.response_id, kResponse);
  EXPECT_EQ(ResponseKindName(info.kind), "result_complete");
}

TEST(SparkConnectResponseDecoder, EveryResponseTypeOfTheOneof) {
  const google::protobuf::OneofDescriptor* response_type =
      pb::ExecutePlanResponse::descriptor()->FindOneofByName("response_type");
  ASSERT_EQ(response_type->field_count(), 15);
  for (int i = 0; i < response_type->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = response_type->field(i);
    pb::ExecutePlanResponse response;
    SetIds(&response, true);
    response.GetReflection()->MutableMessage(&response, field);
    const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, response);
    EXPECT_EQ(info.status, DecodeStatus::kOk) << field->name();
    EXPECT_EQ(static_cast<int>(info.kind), field->number()) << field->name();
    EXPECT_EQ(ResponseKindName(info.kind), field->name());
    EXPECT_EQ(info.operation_id, kOperation);
  }
}

TEST(SparkConnectResponseDecoder, SqlCommandResultOf35) {
  pb::ExecutePlanResponse response;
  SetIds(&response, false);
  response.mutable_sql_command_result()->mutable_relation()->mutable_sql()->set_query("SHOW TABLES");
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, response);
  EXPECT_EQ(info.kind, ResponseKind::kSqlCommandResult);
  EXPECT_EQ(info.server_side_session_id, "");
  EXPECT_EQ(info.status, DecodeStatus::kOk);
}

TEST(SparkConnectResponseDecoder, IgnoresUnknownFieldsIncludingNewerResponseFields) {
  pb::ExecutePlanResponse response = ProgressResponse();
  const ResponseInfo expected = DecodeOneResponse(Method::kExecutePlan, response);
  for (google::protobuf::Message* message :
       std::vector<google::protobuf::Message*>{&response, response.mutable_execution_progress(),
                                               response.mutable_execution_progress()->mutable_stages(1)}) {
    google::protobuf::UnknownFieldSet* unknown = message->GetReflection()->MutableUnknownFields(message);
    unknown->AddVarint(1000, 1);
    unknown->AddFixed64(1001, 2);
    unknown->AddFixed32(1002, 3);
    unknown->AddLengthDelimited(1003, "four");
    unknown->AddGroup(1004)->AddVarint(1, 5);
  }
  // 4.1's pipeline_query_function_execution_signal (23) is unknown to this decoder.
  response.GetReflection()->MutableUnknownFields(&response)->AddLengthDelimited(23, "");
  const std::string bytes = response.SerializeAsString();
  const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, bytes);
  EXPECT_TRUE(info == expected) << Describe(info) << "\n" << Describe(expected);
  ExpectSameResponseForEverySplit(Method::kExecutePlan, bytes);
}

// What ResponseInfo should say for an ExecutePlanResponse, computed from protobuf's parse.
ResponseInfo ExpectedFor(const pb::ExecutePlanResponse& response) {
  ResponseInfo info;
  info.method = Method::kExecutePlan;
  info.status = DecodeStatus::kOk;
  info.session_id = response.session_id();
  info.server_side_session_id = response.server_side_session_id();
  info.operation_id = response.operation_id();
  info.response_id = response.response_id();
  info.kind = static_cast<ResponseKind>(response.response_type_case());
  if (response.has_arrow_batch()) {
    info.arrow_row_count = response.arrow_batch().row_count();
    info.arrow_data_bytes = response.arrow_batch().data().size();
    if (response.arrow_batch().has_start_offset())
      info.arrow_start_offset = response.arrow_batch().start_offset();
  }
  if (response.has_execution_progress()) {
    for (const auto& stage : response.execution_progress().stages()) {
      info.stages.push_back({stage.stage_id(), stage.num_tasks(), stage.num_completed_tasks(),
                             stage.input_bytes_read(), stage.done()});
    }
    info.num_inflight_tasks = response.execution_progress().num_inflight_tasks();
  }
  info.has_metrics = response.has_metrics();
  info.observed_metrics_count = static_cast<std::uint32_t>(response.observed_metrics_size());
  info.has_schema = response.has_schema();
  return info;
}

TEST(SparkConnectResponseDecoder, ConcatenatedMessagesMergeLikeProtobuf) {
  std::vector<pb::ExecutePlanResponse> variants(6);
  variants[0] = ArrowResponse(10, true);
  variants[1] = ProgressResponse();
  variants[2].mutable_arrow_batch()->set_row_count(7);  // merges into an earlier batch
  variants[3].mutable_result_complete();
  variants[3].set_operation_id("other-op");
  variants[3].mutable_metrics();
  variants[4].mutable_execution_progress()->set_num_inflight_tasks(3);
  variants[4].add_observed_metrics();
  variants[5].mutable_arrow_batch()->set_data("xyz");
  for (std::size_t a = 0; a < variants.size(); ++a) {
    for (std::size_t b = 0; b < variants.size(); ++b) {
      const std::string bytes = variants[a].SerializeAsString() + variants[b].SerializeAsString();
      pb::ExecutePlanResponse parsed;
      ASSERT_TRUE(parsed.ParseFromString(bytes));
      const ResponseInfo expected = ExpectedFor(parsed);
      const ResponseInfo info = DecodeOneResponse(Method::kExecutePlan, bytes);
      EXPECT_TRUE(info == expected) << a << "+" << b << "\n decoded:  " << Describe(info)
                                    << "\n protobuf: " << Describe(expected);
    }
  }
}

// ---- Unary responses: session ids (4.0 adds server_side_session_id) -----------------------

template <typename Response>
void ExpectSessionIds(Method method, Response response) {
  response.set_session_id(kSession);
  response.set_server_side_session_id(kServerSession);
  const ResponseInfo info = DecodeOneResponse(method, response);
  EXPECT_EQ(info.method, method);
  EXPECT_EQ(info.status, DecodeStatus::kOk) << MethodName(method);
  EXPECT_EQ(info.session_id, kSession) << MethodName(method);
  EXPECT_EQ(info.server_side_session_id, kServerSession) << MethodName(method);
  EXPECT_EQ(info.kind, ResponseKind::kNone);
  ExpectSameResponseForEverySplit(method, response.SerializeAsString());
}

TEST(SparkConnectResponseDecoder, UnaryResponsesSessionIds) {
  pb::AnalyzePlanResponse analyze;
  analyze.mutable_spark_version()->set_version("4.0.0");
  ExpectSessionIds(Method::kAnalyzePlan, analyze);
  pb::ConfigResponse config;
  auto* pair = config.add_pairs();
  pair->set_key("spark.sql.shuffle.partitions");
  pair->set_value("200");
  config.add_warnings("deprecated");
  ExpectSessionIds(Method::kConfig, config);
  pb::AddArtifactsResponse add;
  add.add_artifacts()->set_name("jars/a.jar");
  ExpectSessionIds(Method::kAddArtifacts, add);
  pb::ArtifactStatusesResponse statuses;
  (*statuses.mutable_statuses())["jars/a.jar"].set_exists(true);
  ExpectSessionIds(Method::kArtifactStatus, statuses);
  ExpectSessionIds(Method::kReleaseSession, pb::ReleaseSessionResponse());
  pb::FetchErrorDetailsResponse errors;
  errors.set_root_error_idx(0);
  errors.add_errors()->set_message("boom");
  ExpectSessionIds(Method::kFetchErrorDetails, errors);
  pb::CloneSessionResponse clone;
  clone.set_new_session_id("n");
  ExpectSessionIds(Method::kCloneSession, clone);
  ExpectSessionIds(Method::kGetStatus, pb::GetStatusResponse());
}

TEST(SparkConnectResponseDecoder, ReleaseExecuteAndInterruptResponses) {
  pb::ReleaseExecuteResponse release;
  release.set_session_id(kSession);
  release.set_operation_id(kOperation);
  release.set_server_side_session_id(kServerSession);
  ResponseInfo info = DecodeOneResponse(Method::kReleaseExecute, release);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.operation_id, kOperation);
  EXPECT_EQ(info.server_side_session_id, kServerSession);
  ExpectSameResponseForEverySplit(Method::kReleaseExecute, release.SerializeAsString());

  pb::InterruptResponse interrupt;
  interrupt.set_session_id(kSession);
  interrupt.add_interrupted_ids(kOperation);
  interrupt.add_interrupted_ids("second");
  interrupt.set_server_side_session_id(kServerSession);
  info = DecodeOneResponse(Method::kInterrupt, interrupt);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.server_side_session_id, kServerSession);
  EXPECT_EQ(info.interrupted_ids, (std::vector<std::string>{kOperation, "second"}));
  ExpectSameResponseForEverySplit(Method::kInterrupt, interrupt.SerializeAsString());

  for (std::size_t i = 0; i < kMaxCopiedRepeatedStrings; ++i) {
    interrupt.add_interrupted_ids("more");
  }
  info = DecodeOneResponse(Method::kInterrupt, interrupt);
  EXPECT_EQ(info.interrupted_ids.size(), kMaxCopiedRepeatedStrings);
  EXPECT_EQ(info.dropped_interrupted_ids, 2u);
}

TEST(SparkConnectResponseDecoder, Spark35UnaryResponsesWithoutSessionEcho) {
  // 3.5's AddArtifactsResponse and ArtifactStatusesResponse have neither session field.
  pb::AddArtifactsResponse add;
  add.add_artifacts()->set_name("jars/a.jar");
  ResponseInfo info = DecodeOneResponse(Method::kAddArtifacts, add);
  EXPECT_EQ(info.status, DecodeStatus::kOk);
  EXPECT_EQ(info.session_id, "");
  pb::ConfigResponse config;
  config.set_session_id(kSession);
  info = DecodeOneResponse(Method::kConfig, config);
  EXPECT_EQ(info.session_id, kSession);
  EXPECT_EQ(info.server_side_session_id, "");
}

TEST(SparkConnectResponseDecoder, UnknownMethodIsNotDecoded) {
  const ResponseInfo info = DecodeOneResponse(Method::kUnknown, ArrowResponse(10, true));
  EXPECT_EQ(info.status, DecodeStatus::kNotDecoded);
  EXPECT_TRUE(info == ResponseInfo{});
}

}  // namespace
}  // namespace sparktrace::spark_connect
