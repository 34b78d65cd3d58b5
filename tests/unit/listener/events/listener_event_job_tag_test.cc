// The Spark Connect operation job tag: both user/session orders, ids containing '_', and every
// string that is not an operation tag.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "listener/events/connect_job_tag.h"

namespace sparktrace::listener::events {
namespace {

constexpr std::string_view kSession = "8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6f";
constexpr std::string_view kOperation = "3bbf8b3d-9a64-4c2e-8d7f-0e1d2c3b4a59";

std::string OperationTag(std::string_view first, std::string_view second, std::string_view operation) {
  return "SparkConnect_OperationTag_User_" + std::string(first) + "_Session_" + std::string(second) +
         "_Operation_" + std::string(operation);
}

TEST(ListenerEventJobTag, ParsesUserFirstTagOfSpark352And4) {
  const auto tag = ParseConnectJobTag(OperationTag("etl", kSession, kOperation));
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->user_id, "etl");
  EXPECT_EQ(tag->session_id, kSession);
  EXPECT_EQ(tag->operation_id, kOperation);
  EXPECT_FALSE(tag->user_session_swapped);
}

TEST(ListenerEventJobTag, ParsesSwappedTagOfSpark350And351) {
  // 3.5.0/3.5.1 wrote User_<sessionId>_Session_<userId>.
  const auto tag = ParseConnectJobTag(OperationTag(kSession, "etl", kOperation));
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->user_id, "etl");
  EXPECT_EQ(tag->session_id, kSession);
  EXPECT_EQ(tag->operation_id, kOperation);
  EXPECT_TRUE(tag->user_session_swapped);
}

TEST(ListenerEventJobTag, UserIdsMayContainUnderscoresAndMarkers) {
  for (std::string_view user :
       {"data_eng_team", "a_b_c_", "_lead", "x_Session_y", "svc_Operation_z", "_", "__"}) {
    SCOPED_TRACE(user);
    const auto user_first = ParseConnectJobTag(OperationTag(user, kSession, kOperation));
    ASSERT_TRUE(user_first.has_value());
    EXPECT_EQ(user_first->user_id, user);
    EXPECT_EQ(user_first->session_id, kSession);
    EXPECT_EQ(user_first->operation_id, kOperation);

    const auto swapped = ParseConnectJobTag(OperationTag(kSession, user, kOperation));
    ASSERT_TRUE(swapped.has_value());
    EXPECT_EQ(swapped->user_id, user);
    EXPECT_EQ(swapped->session_id, kSession);
    EXPECT_EQ(swapped->operation_id, kOperation);
    EXPECT_TRUE(swapped->user_session_swapped);
  }
}

TEST(ListenerEventJobTag, AcceptsUpperCaseUuids) {
  const auto tag =
      ParseConnectJobTag(OperationTag("etl", "8F7A2C3E-2B1D-4C5E-9F00-1A2B3C4D5E6F", kOperation));
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->session_id, "8F7A2C3E-2B1D-4C5E-9F00-1A2B3C4D5E6F");
  EXPECT_FALSE(tag->user_session_swapped);
}

TEST(ListenerEventJobTag, NonUuidIdsAreReadUserFirst) {
  // The shape of hand-written test tags (spark-rapids-tools' ConnectEventSuite).
  const auto tag =
      ParseConnectJobTag("SparkConnect_OperationTag_User_userA_Session_sess-aaa-111_Operation_op-bbb-222");
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->user_id, "userA");
  EXPECT_EQ(tag->session_id, "sess-aaa-111");
  EXPECT_EQ(tag->operation_id, "op-bbb-222");
  EXPECT_FALSE(tag->user_session_swapped);
}

TEST(ListenerEventJobTag, ExplicitOrderResolvesAUuidUserId) {
  // Both ids UUIDs: detection must guess (user first); the Spark version knows.
  constexpr std::string_view kUuidUser = "00000000-0000-4000-8000-000000000001";
  const std::string tag = OperationTag(kSession, kUuidUser, kOperation);

  const auto detected = ParseConnectJobTag(tag);
  ASSERT_TRUE(detected.has_value());
  EXPECT_EQ(detected->user_id, kSession);
  EXPECT_FALSE(detected->user_session_swapped);

  const auto as_351 = ParseConnectJobTag(tag, ConnectJobTagOrderForSparkVersion("3.5.1"));
  ASSERT_TRUE(as_351.has_value());
  EXPECT_EQ(as_351->session_id, kSession);
  EXPECT_EQ(as_351->user_id, kUuidUser);
  EXPECT_TRUE(as_351->user_session_swapped);

  const auto as_4 = ParseConnectJobTag(tag, ConnectJobTagOrder::kUserFirst);
  ASSERT_TRUE(as_4.has_value());
  EXPECT_EQ(as_4->user_id, kSession);
  EXPECT_EQ(as_4->session_id, kUuidUser);
}

TEST(ListenerEventJobTag, ExplicitSessionFirstSplitsAtTheFirstMarker) {
  const auto tag = ParseConnectJobTag(OperationTag(kSession, "a_Session_b", kOperation),
                                      ConnectJobTagOrder::kSessionFirst);
  ASSERT_TRUE(tag.has_value());
  EXPECT_EQ(tag->session_id, kSession);
  EXPECT_EQ(tag->user_id, "a_Session_b");
}

TEST(ListenerEventJobTag, OrderForSparkVersion) {
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.0"), ConnectJobTagOrder::kSessionFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.1"), ConnectJobTagOrder::kSessionFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.1-amzn-0"), ConnectJobTagOrder::kSessionFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.2"), ConnectJobTagOrder::kUserFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.10"), ConnectJobTagOrder::kUserFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("3.5.5"), ConnectJobTagOrder::kUserFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("4.0.0"), ConnectJobTagOrder::kUserFirst);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion(""), ConnectJobTagOrder::kDetect);
  EXPECT_EQ(ConnectJobTagOrderForSparkVersion("unknown"), ConnectJobTagOrder::kDetect);
}

TEST(ListenerEventJobTag, RejectsTagsOfOtherOrigins) {
  const std::vector<std::string> others = {
      // Real spark.job.tags values of non-Connect jobs (nds_q72_dataproc_2_2, dataproc).
      "broadcast exchange (runId 70babea1-d1ac-495c-ac41-84fb953c5f5d)",
      // Connect's session tag (from ExecutePlanRequest.tags) and the unused execute tag.
      "SparkConnect_SessionTag_User_etl_Session_" + std::string(kSession) + "_Tag_nightly",
      "SparkConnect_Execute_User_etl_Session_" + std::string(kSession) + "_Tag_nightly",
      // A raw user tag and look-alikes.
      "nightly",
      "sparkconnect_operationtag_user_etl_session_" + std::string(kSession) + "_operation_" +
          std::string(kOperation),
      " " + OperationTag("etl", kSession, kOperation),
  };
  for (const std::string& tag : others) {
    EXPECT_FALSE(ParseConnectJobTag(tag).has_value()) << tag;
  }
}

TEST(ListenerEventJobTag, RejectsGarbageAndTruncatedTags) {
  const std::string full = OperationTag("etl", kSession, kOperation);
  const std::vector<std::string> garbage = {
      "",
      "SparkConnect_OperationTag_",
      "SparkConnect_OperationTag_User_",
      "SparkConnect_OperationTag_User_etl",
      "SparkConnect_OperationTag_User_etl_Session_" + std::string(kSession),
      "SparkConnect_OperationTag_User_etl_Session_" + std::string(kSession) + "_Operation_",
      "SparkConnect_OperationTag_User_etl_Operation_" + std::string(kOperation),  // no session
      OperationTag("", kSession, kOperation),                                     // empty user
      OperationTag("etl", "", kOperation),                                        // empty session
      OperationTag("etl", kSession, "op_with_underscore"),
      std::string(kOperation),
      "SparkConnect_OperationTag_User_etl_Session_" + std::string(kSession) + "_Operation_" +
          std::string(kOperation) + "_Operation_",  // nothing after the last marker
  };
  for (const std::string& tag : garbage) {
    EXPECT_FALSE(ParseConnectJobTag(tag).has_value()) << tag;
  }
  // Every prefix of a valid tag up to the end of "_Operation_" is rejected.
  for (std::size_t length = 0; length < full.size() - kOperation.size(); ++length) {
    EXPECT_FALSE(ParseConnectJobTag(std::string_view(full).substr(0, length)).has_value()) << length;
  }
}

TEST(ListenerEventJobTag, IsUuid) {
  EXPECT_TRUE(IsUuid(kSession));
  EXPECT_TRUE(IsUuid("00000000-0000-0000-0000-000000000000"));
  EXPECT_FALSE(IsUuid(""));
  EXPECT_FALSE(IsUuid("8f7a2c3e2b1d4c5e9f001a2b3c4d5e6f"));
  EXPECT_FALSE(IsUuid("8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6g"));
  EXPECT_FALSE(IsUuid("8f7a2c3e-2b1d-4c5e-9f00_1a2b3c4d5e6f"));
  EXPECT_FALSE(IsUuid("{8f7a2c3e-2b1d-4c5e-9f00-1a2b3c4d5e6}"));
}

TEST(ListenerEventJobTag, SplitsSparkJobTags) {
  const std::string operation_tag = OperationTag("etl", kSession, kOperation);
  const std::string session_tag =
      "SparkConnect_SessionTag_User_etl_Session_" + std::string(kSession) + "_Tag_x";
  const std::string joined = session_tag + "," + operation_tag;
  EXPECT_EQ(SplitJobTags(joined), (std::vector<std::string_view>{session_tag, operation_tag}));

  EXPECT_TRUE(SplitJobTags("").empty());
  EXPECT_TRUE(SplitJobTags(",,,").empty());
  EXPECT_EQ(SplitJobTags("a"), (std::vector<std::string_view>{"a"}));
  EXPECT_EQ(SplitJobTags(",a,,b,"), (std::vector<std::string_view>{"a", "b"}));
  // Spaces belong to the tag.
  EXPECT_EQ(SplitJobTags("broadcast exchange (runId 1), b "),
            (std::vector<std::string_view>{"broadcast exchange (runId 1)", " b "}));
}

}  // namespace
}  // namespace sparktrace::listener::events
