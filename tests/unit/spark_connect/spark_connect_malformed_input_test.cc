// Arbitrary, truncated, mis-typed and deeply nested bytes: the decoders must not crash, must flag
// the failure, and must keep what they read before it.
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "spark/connect/base.pb.h"
#include "spark_connect/request_decoder.h"
#include "spark_connect/response_decoder.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

namespace pb = ::spark::connect;

constexpr std::array<Method, 13> kAllMethods = {
    Method::kUnknown,        Method::kExecutePlan,    Method::kAnalyzePlan,       Method::kConfig,
    Method::kAddArtifacts,   Method::kArtifactStatus, Method::kInterrupt,         Method::kReattachExecute,
    Method::kReleaseExecute, Method::kReleaseSession, Method::kFetchErrorDetails, Method::kCloneSession,
    Method::kGetStatus};

std::string Key(std::uint32_t number, int wire_type) {
  return Varint((std::uint64_t{number} << 3) | wire_type);
}

// One well-formed sample message per method and direction, with most traced fields set.
struct Sample {
  Method method;
  bool request;
  std::unique_ptr<google::protobuf::Message> message;
};

std::vector<Sample> Samples() {
  std::vector<Sample> samples;
  {
    auto request = std::make_unique<pb::ExecutePlanRequest>();
    request->set_session_id("s-1");
    request->mutable_user_context()->set_user_id("etl");
    request->mutable_plan()->mutable_command()->mutable_write_operation();
    request->set_client_type("py");
    request->add_request_options()->mutable_reattach_options()->set_reattachable(true);
    request->set_operation_id("op-1");
    request->add_tags("t");
    request->set_client_observed_server_side_session_id("ss");
    samples.push_back({Method::kExecutePlan, true, std::move(request)});
  }
  {
    auto request = std::make_unique<pb::ReattachExecuteRequest>();
    request->set_session_id("s-1");
    request->set_operation_id("op-1");
    request->set_last_response_id("r-5");
    samples.push_back({Method::kReattachExecute, true, std::move(request)});
  }
  {
    auto request = std::make_unique<pb::ReleaseExecuteRequest>();
    request->set_session_id("s-1");
    request->set_operation_id("op-1");
    request->mutable_release_until()->set_response_id("r-5");
    samples.push_back({Method::kReleaseExecute, true, std::move(request)});
  }
  {
    auto request = std::make_unique<pb::InterruptRequest>();
    request->set_session_id("s-1");
    request->set_interrupt_type(pb::InterruptRequest::INTERRUPT_TYPE_TAG);
    request->set_operation_tag("t");
    samples.push_back({Method::kInterrupt, true, std::move(request)});
  }
  {
    auto request = std::make_unique<pb::ConfigRequest>();
    request->set_session_id("s-1");
    request->mutable_operation()->mutable_get()->add_keys("k");
    samples.push_back({Method::kConfig, true, std::move(request)});
  }
  {
    auto request = std::make_unique<pb::AnalyzePlanRequest>();
    request->set_session_id("s-1");
    request->mutable_schema()->mutable_plan()->mutable_root();
    samples.push_back({Method::kAnalyzePlan, true, std::move(request)});
  }
  {
    auto response = std::make_unique<pb::ExecutePlanResponse>();
    response->set_session_id("s-1");
    response->set_operation_id("op-1");
    response->set_response_id("r-6");
    response->set_server_side_session_id("ss");
    response->mutable_arrow_batch()->set_row_count(3);
    response->mutable_arrow_batch()->set_data(std::string(300, 'a'));
    response->mutable_arrow_batch()->set_start_offset(9);
    response->mutable_metrics()->add_metrics()->set_name("m");
    samples.push_back({Method::kExecutePlan, false, std::move(response)});
  }
  {
    auto response = std::make_unique<pb::ExecutePlanResponse>();
    response->set_operation_id("op-1");
    auto* stage = response->mutable_execution_progress()->add_stages();
    stage->set_stage_id(1);
    stage->set_num_tasks(-1);  // negative int64: a ten-byte varint
    stage->set_done(true);
    response->mutable_execution_progress()->set_num_inflight_tasks(2);
    samples.push_back({Method::kReattachExecute, false, std::move(response)});
  }
  {
    auto response = std::make_unique<pb::InterruptResponse>();
    response->set_session_id("s-1");
    response->add_interrupted_ids("op-1");
    samples.push_back({Method::kInterrupt, false, std::move(response)});
  }
  return samples;
}

bool Failed(const Sample& sample, std::string_view bytes) {
  return sample.request ? IsDecodeFailure(DecodeRequestBytes(sample.method, bytes).status)
                        : IsDecodeFailure(DecodeResponseBytes(sample.method, bytes).status);
}

TEST(SparkConnectMalformedInput, TruncationIsFlaggedExactlyWhenProtobufRejectsIt) {
  // Every prefix of a valid message: cut between top-level fields it is a valid (shorter)
  // message; cut anywhere else it is broken, and protobuf's own parser says which.
  for (const Sample& sample : Samples()) {
    const std::string bytes = sample.message->SerializeAsString();
    for (std::size_t length = 0; length < bytes.size(); ++length) {
      const std::string_view prefix = std::string_view(bytes).substr(0, length);
      std::unique_ptr<google::protobuf::Message> parsed(sample.message->New());
      const bool protobuf_accepts = parsed->ParseFromArray(prefix.data(), static_cast<int>(prefix.size()));
      EXPECT_EQ(Failed(sample, prefix), !protobuf_accepts)
          << sample.message->GetTypeName() << " cut to " << length << " of " << bytes.size();
    }
  }
}

TEST(SparkConnectMalformedInput, TruncatedExecutePlanKeepsTheFieldsBeforeTheCut) {
  pb::ExecutePlanRequest request;
  request.set_session_id("s-1");
  request.mutable_user_context()->set_user_id("etl");
  request.set_operation_id("op-1");
  request.add_tags("a-fairly-long-tag-value");
  const std::string bytes = request.SerializeAsString();
  const RequestInfo info =
      DecodeRequestBytes(Method::kExecutePlan, std::string_view(bytes).substr(0, bytes.size() - 3));
  EXPECT_EQ(info.status, DecodeStatus::kTruncated);
  EXPECT_EQ(info.session_id, "s-1");
  EXPECT_EQ(info.user_id, "etl");
  EXPECT_EQ(info.operation_id, "op-1");
  EXPECT_TRUE(info.tags.empty());
}

TEST(SparkConnectMalformedInput, WrongWireTypesAreFlaggedAndTheRestDecoded) {
  // session_id as a varint, user_context as fixed32, plan as a varint, a tag as fixed64; then
  // valid fields.
  const std::string request_bytes = Key(1, 0) + Varint(5) + Key(2, 5) + "abcd" + Key(3, 0) + Varint(1) +
                                    Key(7, 1) + "12345678" + LengthDelimitedField(6, "op-1") +
                                    LengthDelimitedField(4, "py");
  RequestInfo request = DecodeRequestBytes(Method::kExecutePlan, request_bytes);
  EXPECT_EQ(request.status, DecodeStatus::kWrongWireType);
  EXPECT_EQ(request.session_id, "");
  EXPECT_EQ(request.plan_kind, PlanKind::kNone);
  EXPECT_TRUE(request.tags.empty());
  EXPECT_EQ(request.operation_id, "op-1");
  EXPECT_EQ(request.client_type, "py");

  // Inside a sub-message: reattachable as a string.
  const std::string options =
      LengthDelimitedField(5, LengthDelimitedField(1, LengthDelimitedField(1, "yes")));
  request = DecodeRequestBytes(Method::kExecutePlan, options + LengthDelimitedField(1, "s-2"));
  EXPECT_EQ(request.status, DecodeStatus::kWrongWireType);
  EXPECT_EQ(request.session_id, "s-2");

  // Interrupt type as a string; ReleaseSession's allow_reconnect as fixed32.
  EXPECT_EQ(DecodeRequestBytes(Method::kInterrupt, LengthDelimitedField(4, "all")).status,
            DecodeStatus::kWrongWireType);
  EXPECT_EQ(DecodeRequestBytes(Method::kReleaseSession, Key(4, 5) + std::string("\1\0\0\0", 4)).status,
            DecodeStatus::kWrongWireType);

  // Response: row_count as bytes, data as a varint, response_id as fixed64.
  const std::string response_bytes =
      LengthDelimitedField(2, LengthDelimitedField(1, "12") + Key(2, 0) + Varint(77)) + Key(13, 1) +
      "abcdefgh" + LengthDelimitedField(12, "op-9");
  const ResponseInfo response = DecodeResponseBytes(Method::kExecutePlan, response_bytes);
  EXPECT_EQ(response.status, DecodeStatus::kWrongWireType);
  EXPECT_EQ(response.kind, ResponseKind::kArrowBatch);
  EXPECT_EQ(response.arrow_row_count, 0);
  EXPECT_EQ(response.arrow_data_bytes, 0u);
  EXPECT_EQ(response.response_id, "");
  EXPECT_EQ(response.operation_id, "op-9");
}

TEST(SparkConnectMalformedInput, DeepNestingIsBoundedOrNeverWalked) {
  // Groups nested far beyond the limit, as an unknown field of every message.
  std::string groups;
  for (int i = 0; i < 100'000; ++i) {
    groups += Key(50, 3);
  }
  for (Method method : kAllMethods) {
    const RequestInfo request = DecodeRequestBytes(method, LengthDelimitedField(1, "s") + groups);
    const ResponseInfo response = DecodeResponseBytes(method, LengthDelimitedField(1, "s") + groups);
    if (method == Method::kUnknown) {
      EXPECT_EQ(request.status, DecodeStatus::kNotDecoded);
      continue;
    }
    EXPECT_EQ(request.status, DecodeStatus::kTooDeep) << MethodName(method);
    EXPECT_EQ(request.session_id, "s") << MethodName(method);
    EXPECT_EQ(response.status, DecodeStatus::kTooDeep) << MethodName(method);
  }

  // Also inside a message the decoder enters (the Command of a plan).
  const std::string in_command = LengthDelimitedField(3, LengthDelimitedField(2, Key(50, 3) + groups));
  EXPECT_EQ(DecodeRequestBytes(Method::kExecutePlan, in_command).status, DecodeStatus::kTooDeep);

  // Relations nest arbitrarily; they are skipped by length and never walked, so a 10 000-deep
  // (well-formed) relation tree is fine.
  std::string relation = LengthDelimitedField(10, LengthDelimitedField(1, "SELECT 1"));
  for (int i = 0; i < 10'000; ++i) {
    relation = LengthDelimitedField(3, relation);  // a Project of a Project of …
  }
  const RequestInfo deep =
      DecodeRequestBytes(Method::kExecutePlan, LengthDelimitedField(3, LengthDelimitedField(1, relation)) +
                                                   LengthDelimitedField(6, "op"));
  EXPECT_EQ(deep.status, DecodeStatus::kOk);
  EXPECT_EQ(deep.plan_kind, PlanKind::kRoot);
  EXPECT_EQ(deep.root_relation_field, 3);
  EXPECT_EQ(deep.operation_id, "op");
}

TEST(SparkConnectMalformedInput, InvalidTagsStopDecodingWithMalformed) {
  for (const std::string& bytes :
       {LengthDelimitedField(1, "s") + Varint(0) + LengthDelimitedField(6, "op"),
        LengthDelimitedField(1, "s") + Varint(0x0e), LengthDelimitedField(1, "s") + Key(9, 4),
        LengthDelimitedField(1, "s") + Key(20, 0) + std::string(10, '\xff') + "\x01"}) {
    const RequestInfo info = DecodeRequestBytes(Method::kExecutePlan, bytes);
    EXPECT_EQ(info.status, DecodeStatus::kMalformed);
    EXPECT_EQ(info.session_id, "s");
    EXPECT_FALSE(info.operation_id.has_value());
  }
}

// Every decoder on the same bytes: no crash, and the same answer however the bytes are sliced.
void DecodeEverywhere(std::string_view bytes, std::size_t cut_a, std::size_t cut_b, int* failures) {
  const std::array<ByteSlice, 3> slices = {AsSlice(bytes.substr(0, cut_a)),
                                           AsSlice(bytes.substr(cut_a, cut_b - cut_a)),
                                           AsSlice(bytes.substr(cut_b))};
  for (Method method : kAllMethods) {
    const RequestInfo request = DecodeRequestBytes(method, bytes);
    const ResponseInfo response = DecodeResponseBytes(method, bytes);
    ASSERT_TRUE(DecodeRequest(method, slices) == request)
        << MethodName(method) << " cut " << cut_a << "," << cut_b;
    ASSERT_TRUE(DecodeResponse(method, slices) == response)
        << MethodName(method) << " cut " << cut_a << "," << cut_b;
    *failures += IsDecodeFailure(request.status) + IsDecodeFailure(response.status);
  }
}

TEST(SparkConnectMalformedInput, RandomBytes) {
  std::mt19937 random(20240611);
  int failures = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string bytes(random() % 200, '\0');
    for (char& byte : bytes) {
      byte = static_cast<char>(random());
    }
    const std::size_t cut_a = bytes.empty() ? 0 : random() % (bytes.size() + 1);
    const std::size_t cut_b = cut_a + (bytes.size() == cut_a ? 0 : random() % (bytes.size() - cut_a + 1));
    DecodeEverywhere(bytes, cut_a, cut_b, &failures);
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(failures, 1000);  // random bytes are rarely a well-formed message
}

TEST(SparkConnectMalformedInput, MutatedValidMessages) {
  int failures = 0;
  for (const Sample& sample : Samples()) {
    const std::string original = sample.message->SerializeAsString();
    for (std::size_t position = 0; position < original.size(); ++position) {
      for (std::uint8_t value : {0x00, 0x01, 0x07, 0x08, 0x0a, 0x7f, 0x80, 0xff}) {
        std::string bytes = original;
        bytes[position] = static_cast<char>(value);
        DecodeEverywhere(bytes, position / 2, position, &failures);
        if (HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(failures, 0);
}

}  // namespace
}  // namespace sparktrace::spark_connect
