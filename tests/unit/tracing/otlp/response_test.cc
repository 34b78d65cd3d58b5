#include "tracing/otlp/response.h"

#include <gtest/gtest.h>

#include "tracing/otlp/proto_reader.h"
#include "tracing/otlp/proto_writer.h"

namespace sparktrace::tracing::otlp {
namespace {

// Inputs are built with literal field numbers from trace_service.proto and googleapis'
// google/rpc/{status,error_details}.proto; ProtoWriter's bytes are pinned by otlp/encoder_test.

std::string PartialSuccessResponse(std::int64_t rejected, const std::string& message) {
  ProtoWriter response;
  response.Varint(7, 99);                          // an unknown field first: must be skipped
  response.Message(1, [&](ProtoWriter& partial) {  // ExportTraceServiceResponse.partial_success
    partial.Int64(1, rejected);                    // rejected_spans
    partial.Bytes(2, message);                     // error_message
    partial.Fixed64(9, 5);                         // unknown
  });
  return response.Release();
}

std::string RpcStatusBytes(int code, const std::string& message, bool retry_info, std::int64_t seconds,
                           std::int32_t nanos) {
  ProtoWriter status;
  status.Varint(1, static_cast<std::uint64_t>(code));  // google.rpc.Status.code
  status.Bytes(2, message);                            // message
  status.Message(3, [](ProtoWriter& any) {             // details: some other detail first
    any.Bytes(1, "type.googleapis.com/google.rpc.DebugInfo");
    any.Bytes(2, "whatever");
  });
  if (retry_info) {
    status.Message(3, [&](ProtoWriter& any) {
      any.Bytes(1, "type.googleapis.com/google.rpc.RetryInfo");  // Any.type_url
      ProtoWriter retry;
      retry.Message(1, [&](ProtoWriter& duration) {    // RetryInfo.retry_delay
        if (seconds != 0) duration.Int64(1, seconds);  // Duration.seconds
        if (nanos != 0) duration.Int64(2, nanos);      // Duration.nanos
      });
      any.Bytes(2, retry.bytes());  // Any.value
    });
  }
  return status.Release();
}

TEST(OtlpResponse, EmptyResponseIsFullSuccess) {
  auto parsed = ParseExportTraceServiceResponse("");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->rejected_spans, 0);
  EXPECT_TRUE(parsed->error_message.empty());
}

TEST(OtlpResponse, ReadsPartialSuccessAndSkipsUnknownFields) {
  auto parsed = ParseExportTraceServiceResponse(PartialSuccessResponse(3, "spans too old"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->rejected_spans, 3);
  EXPECT_EQ(parsed->error_message, "spans too old");
}

TEST(OtlpResponse, TruncatedResponseIsAnError) {
  std::string bytes = PartialSuccessResponse(3, "spans too old");
  bytes.pop_back();
  EXPECT_FALSE(ParseExportTraceServiceResponse(bytes).ok());
  EXPECT_FALSE(ParseExportTraceServiceResponse(std::string("\x0a\xff", 2)).ok());
}

TEST(OtlpResponse, RpcStatusWithRetryInfo) {
  auto parsed = ParseRpcStatus(RpcStatusBytes(8, "slow down", true, 1, 500'000'000));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->code, 8);
  EXPECT_EQ(parsed->message, "slow down");
  ASSERT_TRUE(parsed->retry_delay.has_value());
  EXPECT_EQ(*parsed->retry_delay, std::chrono::milliseconds(1500));
}

TEST(OtlpResponse, RpcStatusWithoutRetryInfoOrWithAnEmptyDelay) {
  auto without = ParseRpcStatus(RpcStatusBytes(8, "full", false, 0, 0));
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->retry_delay.has_value());
  auto empty_delay = ParseRpcStatus(RpcStatusBytes(14, "", true, 0, 0));
  ASSERT_TRUE(empty_delay.ok());
  ASSERT_TRUE(empty_delay->retry_delay.has_value());
  EXPECT_EQ(*empty_delay->retry_delay, std::chrono::nanoseconds(0));
}

TEST(OtlpResponse, NegativeDelayIsZero) {
  auto parsed = ParseRpcStatus(RpcStatusBytes(8, "", true, -5, 0));
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed->retry_delay, std::chrono::nanoseconds(0));
}

TEST(OtlpProtoReader, RejectsGroupsAndFieldZero) {
  EXPECT_FALSE(ProtoReader(std::string("\x0b", 1)).Next().ok());  // field 1, wire type 3 (start group)
  EXPECT_FALSE(ProtoReader(std::string("\x00\x01", 2)).Next().ok());
  EXPECT_FALSE(ProtoReader(std::string("\x09\x01\x02", 3)).Next().ok());  // truncated fixed64
}

TEST(OtlpProtoReader, ReadsFixed32AndVarints) {
  const std::string bytes("\x0d\x01\x00\x00\x80\x10\x96\x01", 8);  // the reader keeps a view
  ProtoReader reader(bytes);
  auto first = reader.Next();
  ASSERT_TRUE(first.ok() && first->has_value());
  EXPECT_EQ((*first)->type, WireType::kFixed32);
  EXPECT_EQ((*first)->number_value, 0x80000001u);
  auto second = reader.Next();
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->number, 2u);
  EXPECT_EQ((*second)->number_value, 150u);
  auto end = reader.Next();
  ASSERT_TRUE(end.ok());
  EXPECT_FALSE(end->has_value());
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
