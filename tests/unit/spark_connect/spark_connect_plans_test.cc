// Real query plans through the request decoder: every `spark.connect.Relation` that Spark 4.1.1's own
// PlanGenerationTestSuite serialized (shared/data/connect-plans/4.1.1, see README-thirdparty.md
// there) is wrapped, as its original bytes, into ExecutePlanRequest.plan.root and decoded.
//
// The expected relation type comes from each plan's .json twin (Spark's protobuf JSON of the same
// message), read with a JSON parser: nothing the decoder computes is used to predict what it
// should compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "spark/connect/base.pb.h"
#include "spark_connect/relation_type.h"
#include "spark_connect/request_decoder.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

namespace fs = std::filesystem;
namespace pb = ::spark::connect;

// How many pairs shared/data/README-thirdparty.md says the directory holds: a plan that goes
// missing must fail the test, not quietly shrink it.
constexpr std::size_t kExpectedPlanCount = 47;
constexpr std::string_view kBinarySuffix = ".proto.bin";
constexpr std::string_view kJsonSuffix = ".json";

// ExecutePlanRequest and Plan field numbers, from Spark's base.proto (the same numbers as
// proto/spark/connect/base.proto here, which the EnvelopeIsWhatProtobufReads test checks).
constexpr std::uint32_t kSessionIdField = 1;
constexpr std::uint32_t kUserContextField = 2;
constexpr std::uint32_t kUserIdField = 1;  // UserContext.user_id
constexpr std::uint32_t kPlanField = 3;
constexpr std::uint32_t kClientTypeField = 4;
constexpr std::uint32_t kOperationIdField = 6;
constexpr std::uint32_t kPlanRootField = 1;  // Plan.root, a Relation

constexpr char kUserId[] = "etl";
constexpr char kScalaClientType[] = "_SPARK_CONNECT_SCALA spark/4.1.1";

// Protobuf JSON writes field names in lowerCamelCase ("setOp", "fillNa"); the proto names are
// snake_case. A name already in snake_case comes back unchanged.
std::string ProtoFieldName(std::string_view json_name) {
  std::string proto_name;
  for (const char c : json_name) {
    if (std::isupper(static_cast<unsigned char>(c))) {
      proto_name.push_back('_');
      proto_name.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else {
      proto_name.push_back(c);
    }
  }
  return proto_name;
}

// ---- the data ----------------------------------------------------------------------------------

// $SPARKTRACE_DATA_DIR when set, else shared/data next to the source tree (this file is
// <source>/tests/unit/spark_connect/, the data <source>/../shared/data), as the other data-driven tests
// find it.
fs::path PlansDir() {
  fs::path data;
  if (const char* configured = std::getenv("SPARKTRACE_DATA_DIR");
      configured != nullptr && *configured != '\0') {
    data = configured;
  } else {
    data = fs::path(__FILE__).parent_path() / ".." / ".." / ".." / ".." / "shared" / "data";
  }
  return (data / "connect-plans" / "4.1.1").lexically_normal();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool EndsWith(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// The names (file name less its suffix) of the files in `dir` ending in `suffix`.
std::set<std::string> NamesWithSuffix(const fs::path& dir, std::string_view suffix) {
  std::set<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_regular_file() && EndsWith(file, suffix)) {
      names.insert(file.substr(0, file.size() - suffix.size()));
    }
  }
  return names;
}

struct RealPlan {
  std::string name;
  std::string relation;       // the .proto.bin bytes, as Spark wrote them
  std::string json_rel_type;  // the .json's one top-level key besides "common"
};

// The rel_type named by the JSON: every key of a Relation's JSON but "common" is a member of the
// rel_type oneof, so there must be exactly one.
std::string JsonRelType(const std::string& json_text, std::string* problem) {
  const nlohmann::json document = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!document.is_object()) {
    *problem = "not a JSON object";
    return {};
  }
  std::vector<std::string> members;
  for (const auto& member : document.items()) {
    if (member.key() != "common") members.push_back(member.key());
  }
  if (members.size() != 1) {
    *problem = "expected one rel_type key, found " + std::to_string(members.size());
    return {};
  }
  return members.front();
}

// Every plan that has both files, sorted by name. Pairing problems are reported by the
// PlanDirectoryHoldsEveryPair test.
std::vector<RealPlan> LoadPlans() {
  const fs::path dir = PlansDir();
  const std::set<std::string> binaries = NamesWithSuffix(dir, kBinarySuffix);
  const std::set<std::string> jsons = NamesWithSuffix(dir, kJsonSuffix);
  std::vector<RealPlan> plans;
  for (const std::string& name : binaries) {
    if (!jsons.contains(name)) continue;
    std::string problem;
    RealPlan plan{name, ReadFile(dir / (name + std::string(kBinarySuffix))), {}};
    plan.json_rel_type = JsonRelType(ReadFile(dir / (name + std::string(kJsonSuffix))), &problem);
    if (!problem.empty()) ADD_FAILURE() << name << kJsonSuffix << ": " << problem;
    plans.push_back(std::move(plan));
  }
  return plans;
}

// ---- the request around a plan -----------------------------------------------------------------

// A length-delimited field (wire type 2): tag, length, payload.
std::string LengthDelimited(std::uint32_t field, std::string_view payload) {
  constexpr std::uint64_t kLengthDelimitedWireType = 2;
  return Varint((std::uint64_t{field} << 3) | kLengthDelimitedWireType) + Varint(payload.size()) +
         std::string(payload);
}

// Each plan gets its own operation id, so that a mix-up between plans shows.
std::string OperationIdFor(const RealPlan& plan) { return "op-" + plan.name; }

// ExecutePlanRequest{session_id, user_context{user_id}, plan{root = the plan's own bytes},
// client_type, operation_id}, in field order as protobuf runtimes write it. The relation is copied
// verbatim: re-serializing it would lose what makes these plans real (unknown fields, map order).
std::string ExecutePlanBody(const RealPlan& plan) {
  return LengthDelimited(kSessionIdField, kSession) +
         LengthDelimited(kUserContextField, LengthDelimited(kUserIdField, kUserId)) +
         LengthDelimited(kPlanField, LengthDelimited(kPlanRootField, plan.relation)) +
         LengthDelimited(kClientTypeField, kScalaClientType) +
         LengthDelimited(kOperationIdField, OperationIdFor(plan));
}

// `bytes` as consecutive slices of `size` bytes (the last one shorter), as gRPC may hand them over.
std::vector<ByteSlice> SlicesOf(std::string_view bytes, std::size_t size) {
  std::vector<ByteSlice> slices;
  for (std::size_t offset = 0; offset < bytes.size(); offset += size) {
    slices.push_back(AsSlice(bytes.substr(offset, size)));
  }
  return slices;
}

// Loads the plans once per test. Without the shared data directory (a checkout without it) the
// tests skip, saying so, as the other data-driven tests do; with it, a missing plan fails them.
class SparkConnectPlansTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::error_code error;
    if (!fs::is_directory(PlansDir().parent_path().parent_path(), error)) {
      GTEST_SKIP() << "shared data not found at " << PlansDir().parent_path().parent_path()
                   << " (set SPARKTRACE_DATA_DIR to the shared/data directory)";
    }
    plans_ = LoadPlans();
    ASSERT_FALSE(plans_.empty()) << "no Spark Connect plans in " << PlansDir()
                                 << " (set SPARKTRACE_DATA_DIR to the shared/data directory)";
  }

  std::vector<RealPlan> plans_;
};

// ---- the tests ---------------------------------------------------------------------------------

TEST_F(SparkConnectPlansTest, PlanDirectoryHoldsEveryPair) {
  const fs::path dir = PlansDir();
  const std::set<std::string> binaries = NamesWithSuffix(dir, kBinarySuffix);
  const std::set<std::string> jsons = NamesWithSuffix(dir, kJsonSuffix);
  EXPECT_EQ(binaries, jsons) << "every " << kBinarySuffix << " needs its " << kJsonSuffix << " and back";
  EXPECT_EQ(binaries.size(), kExpectedPlanCount);
  EXPECT_EQ(plans_.size(), kExpectedPlanCount);
  for (const RealPlan& plan : plans_) {
    EXPECT_FALSE(plan.relation.empty()) << plan.name;
  }
}

TEST_F(SparkConnectPlansTest, EveryPlanDecodesAsARootOfItsRelationType) {
  for (const RealPlan& plan : plans_) {
    SCOPED_TRACE(plan.name);
    // Spark's own JSON of the plan names its relation type; the name the spans carry must match.
    const std::string proto_name = ProtoFieldName(plan.json_rel_type);

    const RequestInfo info = DecodeRequestBytes(Method::kExecutePlan, ExecutePlanBody(plan));

    EXPECT_EQ(info.status, DecodeStatus::kOk) << DecodeStatusName(info.status);
    EXPECT_EQ(info.session_id, kSession);
    EXPECT_EQ(info.user_id, kUserId);
    EXPECT_EQ(info.client_type, kScalaClientType);
    EXPECT_EQ(info.operation_id, OperationIdFor(plan));
    EXPECT_EQ(info.plan_kind, PlanKind::kRoot) << PlanKindName(info.plan_kind);
    EXPECT_EQ(PlanKindName(info.plan_kind), "root");
    EXPECT_FALSE(info.plan_compressed);
    EXPECT_EQ(info.command_kind, CommandKind::kNone);
    EXPECT_EQ(RelationTypeName(info.root_relation_field), proto_name) << "json says " << plan.json_rel_type;
  }
}

// No relation, and a relation type newer than the table, still read as something a span can say.
TEST(SparkConnectRelationType, UnknownNumbersAreNamedByTheirNumber) {
  EXPECT_EQ(RelationTypeName(0), "");
  EXPECT_EQ(RelationTypeName(10), "sql");
  EXPECT_EQ(RelationTypeName(77), "rel_type_77");
}

// gRPC hands a message over as several slices; real plans cut anywhere must decode the same.
TEST_F(SparkConnectPlansTest, EveryPlanDecodesTheSameWhateverItsSlices) {
  for (const RealPlan& plan : plans_) {
    SCOPED_TRACE(plan.name);
    const std::string body = ExecutePlanBody(plan);
    const RequestInfo whole = DecodeRequestBytes(Method::kExecutePlan, body);
    for (const std::size_t size : {1U, 2U, 7U, 64U, 4096U}) {
      const std::vector<ByteSlice> slices = SlicesOf(body, size);
      const RequestInfo split = DecodeRequest(Method::kExecutePlan, slices);
      EXPECT_TRUE(split == whole) << "slices of " << size << " bytes";
    }
  }
}

// The hand-written envelope is what protobuf itself reads as ExecutePlanRequest, so the decoder
// was given the request the test meant, and the plan reached Plan.root untouched.
TEST_F(SparkConnectPlansTest, EnvelopeIsWhatProtobufReads) {
  for (const RealPlan& plan : plans_) {
    SCOPED_TRACE(plan.name);
    pb::ExecutePlanRequest request;
    ASSERT_TRUE(request.ParseFromString(ExecutePlanBody(plan)));
    EXPECT_EQ(request.session_id(), kSession);
    EXPECT_EQ(request.user_context().user_id(), kUserId);
    EXPECT_EQ(request.client_type(), kScalaClientType);
    EXPECT_EQ(request.operation_id(), OperationIdFor(plan));
    EXPECT_EQ(request.plan().op_type_case(), pb::Plan::kRoot);
    EXPECT_EQ(request.plan().root().ByteSizeLong(), plan.relation.size());
  }
}

}  // namespace
}  // namespace sparktrace::spark_connect
