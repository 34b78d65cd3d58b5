#include "tracing/airflow_identity.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace sparktrace::tracing {
namespace {

using Headers = std::vector<MetadataEntry>;

AirflowIdentity Sample() {
  return AirflowIdentity{"etl", "load", "manual__2024-01-01T00:00:00+00:00", 2, -1};
}

TEST(AirflowIdentity, ParsesAllFields) {
  const Headers headers = {{"x-airflow-dag-id", "etl"},
                           {"content-type", "application/grpc"},
                           {"x-airflow-task-id", "load"},
                           {"x-airflow-run-id", "manual__2024-01-01T00:00:00+00:00"},
                           {"x-airflow-try-number", "3"},
                           {"x-airflow-map-index", "7"},
                           {"x-airflow-something-else", "ignored"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  ASSERT_TRUE(parse.identity.has_value()) << *parse.error;
  EXPECT_FALSE(parse.error.has_value());
  EXPECT_EQ(*parse.identity, (AirflowIdentity{"etl", "load", "manual__2024-01-01T00:00:00+00:00", 3, 7}));
}

TEST(AirflowIdentity, DefaultsTryNumberAndMapIndex) {
  const Headers headers = {{"x-airflow-task-id", "load"}, {"x-airflow-dag-id", "etl"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  ASSERT_TRUE(parse.identity.has_value());
  EXPECT_EQ(*parse.identity, (AirflowIdentity{"etl", "load", "", 1, -1}));
}

TEST(AirflowIdentity, AbsentWithoutHeaders) {
  const Headers headers = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                           {"x-airflow", "etl"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  EXPECT_FALSE(parse.identity.has_value());
  EXPECT_FALSE(parse.error.has_value());
  EXPECT_FALSE(ParseAirflowIdentity({}).identity.has_value());
}

TEST(AirflowIdentity, TrimsBlanksAndTreatsEmptyAsAbsent) {
  const Headers headers = {{"x-airflow-dag-id", " etl\t"},
                           {"x-airflow-task-id", "load "},
                           {"x-airflow-run-id", ""},
                           {"x-airflow-try-number", " "},
                           {"x-airflow-map-index", "0"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  ASSERT_TRUE(parse.identity.has_value()) << *parse.error;
  EXPECT_EQ(*parse.identity, (AirflowIdentity{"etl", "load", "", 1, 0}));
}

TEST(AirflowIdentity, AcceptsLimitsAndCanonicalisesNumbers) {
  const std::string longest(kMaxAirflowIdLength, 'd');
  const Headers headers = {{"x-airflow-dag-id", longest},
                           {"x-airflow-task-id", "group.task-1_a"},
                           {"x-airflow-run-id", "run with spaces: ok"},
                           {"x-airflow-try-number", "02"},
                           {"x-airflow-map-index", "2147483647"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  ASSERT_TRUE(parse.identity.has_value()) << *parse.error;
  EXPECT_EQ(parse.identity->dag_id, longest);
  EXPECT_EQ(parse.identity->run_id, "run with spaces: ok");
  EXPECT_EQ(parse.identity->try_number, 2);
  EXPECT_EQ(parse.identity->map_index, 2147483647);
}

struct RejectCase {
  std::string name;
  Headers headers;
  AirflowIdentityError error;
};

TEST(AirflowIdentity, RejectsAbsurdValues) {
  const std::string too_long(kMaxAirflowIdLength + 1, 'x');
  const std::vector<RejectCase> kCases = {
      {"dag only", {{"x-airflow-dag-id", "etl"}}, AirflowIdentityError::kIncomplete},
      {"task only", {{"x-airflow-task-id", "load"}}, AirflowIdentityError::kIncomplete},
      {"run only", {{"x-airflow-run-id", "r"}}, AirflowIdentityError::kIncomplete},
      {"empty dag",
       {{"x-airflow-dag-id", " "}, {"x-airflow-task-id", "load"}},
       AirflowIdentityError::kIncomplete},
      {"duplicate dag",
       {{"x-airflow-dag-id", "a"}, {"x-airflow-dag-id", "b"}, {"x-airflow-task-id", "t"}},
       AirflowIdentityError::kDuplicateHeader},
      {"long dag",
       {{"x-airflow-dag-id", too_long}, {"x-airflow-task-id", "t"}},
       AirflowIdentityError::kBadDagId},
      {"space in dag",
       {{"x-airflow-dag-id", "my dag"}, {"x-airflow-task-id", "t"}},
       AirflowIdentityError::kBadDagId},
      {"newline in dag",
       {{"x-airflow-dag-id", "a\nb"}, {"x-airflow-task-id", "t"}},
       AirflowIdentityError::kBadDagId},
      {"non-ascii dag",
       {{"x-airflow-dag-id", "caf\xc3\xa9"}, {"x-airflow-task-id", "t"}},
       AirflowIdentityError::kBadDagId},
      {"long task",
       {{"x-airflow-dag-id", "d"}, {"x-airflow-task-id", too_long}},
       AirflowIdentityError::kBadTaskId},
      {"nul in task",
       {{"x-airflow-dag-id", "d"}, {"x-airflow-task-id", std::string_view("t\0x", 3)}},
       AirflowIdentityError::kBadTaskId},
      {"long run",
       {{"x-airflow-dag-id", "d"}, {"x-airflow-task-id", "t"}, {"x-airflow-run-id", too_long}},
       AirflowIdentityError::kBadRunId},
      {"control char in run",
       {{"x-airflow-dag-id", "d"}, {"x-airflow-task-id", "t"}, {"x-airflow-run-id", "a\x7f"}},
       AirflowIdentityError::kBadRunId},
  };
  for (const RejectCase& test_case : kCases) {
    const AirflowIdentityParse parse = ParseAirflowIdentity(test_case.headers);
    EXPECT_FALSE(parse.identity.has_value()) << test_case.name;
    ASSERT_TRUE(parse.error.has_value()) << test_case.name;
    EXPECT_EQ(*parse.error, test_case.error) << test_case.name;
  }
}

TEST(AirflowIdentity, RejectsNonNumericTryNumberAndMapIndex) {
  for (const char* bad : {"abc", "1.0", "+1", "-1", "0x1", "1 2", "2147483648", "99999999999999999999"}) {
    const Headers headers = {
        {"x-airflow-dag-id", "d"}, {"x-airflow-task-id", "t"}, {"x-airflow-try-number", bad}};
    EXPECT_EQ(ParseAirflowIdentity(headers).error, AirflowIdentityError::kBadTryNumber) << bad;
  }
  for (const char* bad : {"abc", "-2", "-01", "--1", "1e3", "2147483648"}) {
    const Headers headers = {
        {"x-airflow-dag-id", "d"}, {"x-airflow-task-id", "t"}, {"x-airflow-map-index", bad}};
    EXPECT_EQ(ParseAirflowIdentity(headers).error, AirflowIdentityError::kBadMapIndex) << bad;
  }
}

TEST(AirflowIdentity, ErrorsPrintAsWords) {
  std::ostringstream out;
  out << AirflowIdentityError::kBadTryNumber;
  EXPECT_EQ(out.str(), "bad_try_number");
  EXPECT_EQ(AirflowIdentityErrorName(AirflowIdentityError::kIncomplete), "incomplete");
  EXPECT_EQ(AirflowIdentityErrorName(AirflowIdentityError::kDuplicateHeader), "duplicate_header");
}

TEST(AirflowIdentity, CanonicalKeyIsDocumentedFormat) {
  EXPECT_EQ(CanonicalTaskAttemptKey(Sample()),
            "airflow-task-attempt/v1\n3:etl\n4:load\n33:manual__2024-01-01T00:00:00+00:00\n2\n-1\n");
  EXPECT_EQ(CanonicalTaskAttemptKey(AirflowIdentity{"etl", "load", "", 1, -1}),
            "airflow-task-attempt/v1\n3:etl\n4:load\n0:\n1\n-1\n");
}

// Pinned so that a change in the scheme (which would split running tasks' traces across a
// release) fails loudly. Value from Python: hashlib.sha256(key).hexdigest()[:32].
TEST(AirflowIdentity, DerivedTraceIdIsStable) {
  EXPECT_EQ(ToHex(DeriveTraceId(Sample())), "c2c65e31375b848b6480a63fb4ac1f1b");
  const AirflowIdentity copy = Sample();
  EXPECT_EQ(DeriveTraceId(copy), DeriveTraceId(Sample()));
  EXPECT_TRUE(IsValid(DeriveTraceId(Sample())));
}

TEST(AirflowIdentity, AnyFieldChangeChangesTheTrace) {
  std::vector<AirflowIdentity> variants(6, Sample());
  variants[1].dag_id = "etl2";
  variants[2].task_id = "load2";
  variants[3].run_id = "scheduled__2024-01-01T00:00:00+00:00";
  variants[4].try_number = 3;
  variants[5].map_index = 0;
  std::set<std::string> ids;
  for (const AirflowIdentity& identity : variants) ids.insert(ToHex(DeriveTraceId(identity)));
  EXPECT_EQ(ids.size(), variants.size());
}

TEST(AirflowIdentity, ConcatenationCannotCollide) {
  const std::pair<AirflowIdentity, AirflowIdentity> kPairs[] = {
      {{"ab", "c", "", 1, -1}, {"a", "bc", "", 1, -1}},
      {{"a", "b", "c", 1, -1}, {"a", "bc", "", 1, -1}},
      {{"a:b", "c", "", 1, -1}, {"a", "b:c", "", 1, -1}},
      {{"a", "b", "", 12, -1}, {"a", "b", "1", 2, -1}},
      {{"a", "b", "r", 1, 11}, {"a", "b", "r", 11, 1}},
      // A field that spells out the next field's encoding.
      {{"a\n1:b", "c", "", 1, -1}, {"a", "b\n1:c", "", 1, -1}},
      {{"a", "b", "0:\n1\n-1\n", 1, -1}, {"a", "b", "", 1, -1}},
  };
  for (const auto& [first, second] : kPairs) {
    EXPECT_NE(CanonicalTaskAttemptKey(first), CanonicalTaskAttemptKey(second));
    EXPECT_NE(DeriveTraceId(first), DeriveTraceId(second)) << CanonicalTaskAttemptKey(first);
  }
}

TEST(AirflowIdentity, ParsedAndBuiltIdentitiesShareATrace) {
  const Headers headers = {{"x-airflow-dag-id", "etl"},
                           {"x-airflow-task-id", "load"},
                           {"x-airflow-run-id", "manual__2024-01-01T00:00:00+00:00"},
                           {"x-airflow-try-number", "2"}};
  const AirflowIdentityParse parse = ParseAirflowIdentity(headers);
  ASSERT_TRUE(parse.identity.has_value());
  EXPECT_EQ(DeriveTraceId(*parse.identity), DeriveTraceId(Sample()));
}

TEST(AirflowIdentity, AttributesCarryTypes) {
  const std::vector<Attribute> attributes = ToAttributes(AirflowIdentity{"etl", "load", "r1", 2, 5});
  ASSERT_EQ(attributes.size(), 5u);
  EXPECT_EQ(attributes[0].key, "airflow.dag_id");
  EXPECT_EQ(std::get<std::string>(attributes[0].value), "etl");
  EXPECT_EQ(attributes[1].key, "airflow.task_id");
  EXPECT_EQ(std::get<std::string>(attributes[1].value), "load");
  EXPECT_EQ(attributes[2].key, "airflow.run_id");
  EXPECT_EQ(std::get<std::string>(attributes[2].value), "r1");
  EXPECT_EQ(attributes[3].key, "airflow.try_number");
  EXPECT_EQ(std::get<std::int64_t>(attributes[3].value), 2);
  EXPECT_EQ(attributes[4].key, "airflow.map_index");
  EXPECT_EQ(std::get<std::int64_t>(attributes[4].value), 5);

  const std::vector<Attribute> without_run = ToAttributes(AirflowIdentity{"etl", "load", "", 1, -1});
  ASSERT_EQ(without_run.size(), 4u);
  EXPECT_EQ(without_run[2].key, "airflow.try_number");
  EXPECT_EQ(std::get<std::int64_t>(without_run[3].value), -1);
}

}  // namespace
}  // namespace sparktrace::tracing

namespace sparktrace::tracing {
namespace {

// The task span id the Airflow plugin derives too (sparktrace_plugin.py): bytes 16..23 of
// SHA-256("airflow-task-attempt/v1\n3:etl\n4:load\n0:\n1\n-1\n"), whose first 16 are the trace id.
TEST(AirflowIdentity, DerivesTheTaskSpanIdFromTheSameDigest) {
  const AirflowIdentity identity{"etl", "load", "", 1, -1};
  EXPECT_EQ(ToHex(DeriveTraceId(identity)), "a974bd68fed80afcb131311975f1981c");
  EXPECT_EQ(ToHex(DeriveTaskSpanId(identity)), "5f4140379131f01b");
  EXPECT_NE(DeriveTaskSpanId(identity), DeriveTaskSpanId(AirflowIdentity{"etl", "load", "", 2, -1}));
}

}  // namespace
}  // namespace sparktrace::tracing
