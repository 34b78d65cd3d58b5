// The spark-connect-operation-id header: which values are used, which are ignored and why, and
// which of header and body names the operation a call belongs to.
#include "tracing/connect/call_operation_id.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::tracing::connect {
namespace {

constexpr char kHeader[] = "spark-connect-operation-id";
constexpr char kOperation[] = "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9";
constexpr char kOther[] = "0f0e0d0c-0b0a-4908-8706-050403020100";

using Entries = std::vector<std::pair<std::string, std::string>>;

OperationIdHeader Read(const Entries& entries) {
  proxy::ClientMetadata metadata;
  for (const auto& [key, value] : entries) metadata.emplace(key, value);
  return ReadOperationIdHeader(metadata);
}

TEST(OperationIdHeader, ValidValuesAreUsedAsSent) {
  for (const std::string value :
       {kOperation, "1B2C3D4E-5F60-4718-8293-A4B5C6D7E8F9", "00000000-0000-0000-0000-000000000000"}) {
    const OperationIdHeader header = Read({{"traceparent", "x"}, {kHeader, value}});
    EXPECT_EQ(header.id, value);
    EXPECT_EQ(header.issue, std::nullopt) << value;
  }
}

TEST(OperationIdHeader, AbsentIsNeitherUsedNorAnIssue) {
  const OperationIdHeader header = Read({{"x-operation-id", kOperation}});
  EXPECT_EQ(header.id, std::nullopt);
  EXPECT_EQ(header.issue, std::nullopt);
}

TEST(OperationIdHeader, InvalidValuesAreIgnoredWithTheirReason) {
  const std::vector<std::pair<Entries, OperationIdHeaderIssue>> cases = {
      {{{kHeader, ""}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, "op-1"}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, "1b2c3d4e5f604718829 3a4b5c6d7e8f9"}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, "1b2c3d4e-5f60-4718-8293_a4b5c6d7e8f9"}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, "{b2c3d4e-5f60-4718-8293-a4b5c6d7e8f}"}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, "1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f"}}, OperationIdHeaderIssue::kMalformed},
      {{{kHeader, std::string(kOperation) + " "}}, OperationIdHeaderIssue::kTooLong},
      {{{kHeader, std::string(100000, '1')}}, OperationIdHeaderIssue::kTooLong},
      {{{kHeader, kOperation}, {kHeader, kOther}}, OperationIdHeaderIssue::kRepeated},
      {{{kHeader, kOperation}, {kHeader, kOperation}}, OperationIdHeaderIssue::kRepeated},
  };
  for (const auto& [entries, issue] : cases) {
    const OperationIdHeader header = Read(entries);
    EXPECT_EQ(header.id, std::nullopt) << entries.front().second.substr(0, 40);
    EXPECT_EQ(header.issue, issue) << entries.front().second.substr(0, 40);
  }
}

TEST(OperationIdHeader, IssuesHaveMetricLabelNames) {
  EXPECT_EQ(OperationIdHeaderIssueName(OperationIdHeaderIssue::kMalformed), "malformed");
  EXPECT_EQ(OperationIdHeaderIssueName(OperationIdHeaderIssue::kTooLong), "too_long");
  EXPECT_EQ(OperationIdHeaderIssueName(OperationIdHeaderIssue::kRepeated), "repeated");
  EXPECT_EQ(OperationIdHeaderIssueName(OperationIdHeaderIssue::kMismatch), "mismatch");
}

TEST(CallOperationId, TheBodyWinsAndTheHeaderStandsInForABodyThatNamesNone) {
  const CallOperationId agree = ResolveCallOperationId(std::string(kOperation), std::string(kOperation));
  EXPECT_EQ(agree.id, kOperation);
  EXPECT_FALSE(agree.from_header);
  EXPECT_FALSE(agree.mismatch);

  const CallOperationId disagree = ResolveCallOperationId(std::string(kOther), std::string(kOperation));
  EXPECT_EQ(disagree.id, kOperation) << "Spark's server acts on the body";
  EXPECT_TRUE(disagree.mismatch);

  for (const std::optional<std::string>& body :
       {std::optional<std::string>(), std::optional<std::string>("")}) {
    const CallOperationId header_only = ResolveCallOperationId(std::string(kOther), body);
    EXPECT_EQ(header_only.id, kOther);
    EXPECT_TRUE(header_only.from_header);
    EXPECT_FALSE(header_only.mismatch);
  }

  const CallOperationId body_only = ResolveCallOperationId(std::nullopt, std::string(kOperation));
  EXPECT_EQ(body_only.id, kOperation);
  EXPECT_FALSE(body_only.from_header);
  EXPECT_FALSE(body_only.mismatch);

  EXPECT_EQ(ResolveCallOperationId(std::nullopt, std::nullopt).id, std::nullopt);
}

}  // namespace
}  // namespace sparktrace::tracing::connect
