#include "tracing/trace_context.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace sparktrace::tracing {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kTraceHex = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr std::string_view kSpanHex = "00f067aa0ba902b7";

using Headers = std::vector<MetadataEntry>;

// Hands out 1, 2, 3, ... and counts calls, so tests can tell whether a new trace was started.
class CountingIdGenerator final : public IdGenerator {
 public:
  TraceId NewTraceId() override {
    TraceId id{};
    id[15] = static_cast<std::uint8_t>(++trace_ids_);
    return id;
  }
  SpanId NewSpanId() override {
    SpanId id{};
    id[7] = static_cast<std::uint8_t>(++span_ids_);
    return id;
  }
  int trace_ids() const { return trace_ids_; }

 private:
  int trace_ids_ = 0;
  int span_ids_ = 0;
};

Sampler MakeSampler(double ratio) { return Sampler::Create(ratio).value(); }

struct ValidCase {
  std::string header;
  std::uint8_t version;
  std::uint8_t flags;
  bool sampled;
};

TEST(TraceContext, ParsesValidTraceparents) {
  const std::string ids = std::string(kTraceHex) + "-" + std::string(kSpanHex);
  const std::vector<ValidCase> kCases = {
      {"00-" + ids + "-01", 0x00, 0x01, true},
      {"00-" + ids + "-00", 0x00, 0x00, false},
      {"00-" + ids + "-09", 0x00, 0x09, true},  // unknown flag bits are ignored, not rejected
      {"00-" + ids + "-fe", 0x00, 0xfe, false},
      {"01-" + ids + "-01", 0x01, 0x01, true},  // a later version of exactly 55 chars
      {"01-" + ids + "-01-extra-fields", 0x01, 0x01, true},
      {"cc-" + ids + "-00-what-the-future-will-be-like", 0xcc, 0x00, false},
      {"fe-" + ids + "-01-", 0xfe, 0x01, true},
  };
  for (const ValidCase& test_case : kCases) {
    const TraceparentResult parsed = ParseTraceparent(test_case.header);
    ASSERT_TRUE(parsed.ok()) << test_case.header << ": " << parsed.error();
    EXPECT_EQ(parsed->version, test_case.version) << test_case.header;
    EXPECT_EQ(parsed->flags, test_case.flags) << test_case.header;
    EXPECT_EQ(parsed->sampled(), test_case.sampled) << test_case.header;
    EXPECT_EQ(ToHex(parsed->trace_id), kTraceHex) << test_case.header;
    EXPECT_EQ(ToHex(parsed->parent_span_id), kSpanHex) << test_case.header;
  }
}

struct MalformedCase {
  std::string header;
  TraceparentError error;
};

TEST(TraceContext, RejectsMalformedTraceparents) {
  const std::string trace(kTraceHex);
  const std::string span(kSpanHex);
  const std::vector<MalformedCase> kCases = {
      {"", TraceparentError::kEmpty},
      // Whitespace is not trimmed.
      {" " + std::string(kValid), TraceparentError::kSurroundingWhitespace},
      {std::string(kValid) + " ", TraceparentError::kSurroundingWhitespace},
      {std::string(kValid) + "\t", TraceparentError::kSurroundingWhitespace},
      {" ", TraceparentError::kSurroundingWhitespace},
      // Upper-case hex anywhere.
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-" + span + "-01", TraceparentError::kUpperCaseHex},
      {"00-" + trace + "-00F067AA0BA902B7-01", TraceparentError::kUpperCaseHex},
      {"00-" + trace + "-" + span + "-0A", TraceparentError::kUpperCaseHex},
      {"0A-" + trace + "-" + span + "-01", TraceparentError::kUpperCaseHex},
      // Lengths.
      {"00", TraceparentError::kBadLength},
      {std::string(kValid.substr(0, 54)), TraceparentError::kBadLength},
      {"00-" + trace.substr(1) + "-" + span + "-01", TraceparentError::kBadLength},
      {"00-" + trace + "0-" + span + "-01", TraceparentError::kBadLength},
      {"00-" + trace + "-" + span + "0-01", TraceparentError::kBadLength},
      {"00-" + trace + "-" + span + "-011", TraceparentError::kBadLength},
      {std::string(kValid) + "-", TraceparentError::kBadLength},  // version 00 allows nothing after
      {std::string(kValid) + "-extra", TraceparentError::kBadLength},
      {"01-" + trace + "-" + span + "-0", TraceparentError::kBadLength},
      // Versions.
      {"ff-" + trace + "-" + span + "-01", TraceparentError::kForbiddenVersion},
      {"ff-" + trace + "-" + span + "-01-extra", TraceparentError::kForbiddenVersion},
      {"0g-" + trace + "-" + span + "-01", TraceparentError::kBadVersion},
      {"-0-" + trace + "-" + span + "-01", TraceparentError::kBadVersion},
      // A later version may be longer only with '-' after the flags.
      {"01-" + trace + "-" + span + "-01x", TraceparentError::kBadSeparator},
      {"01-" + trace + "-" + span + "-011", TraceparentError::kBadSeparator},
      // Separators.
      {"00_" + trace + "-" + span + "-01", TraceparentError::kBadSeparator},
      {"00-" + trace + "_" + span + "-01", TraceparentError::kBadSeparator},
      {"00-" + trace + "-" + span + ".01", TraceparentError::kBadSeparator},
      {"00 " + trace + " " + span + " 01", TraceparentError::kBadSeparator},
      {"004" + trace.substr(1) + "-" + span + "-01", TraceparentError::kBadLength},
      {"0040" + trace.substr(1) + "-" + span + "-01", TraceparentError::kBadSeparator},
      // Non-hex and zero ids.
      {"00-4bf92f3577b34da6a3ce929d0e0e473g-" + span + "-01", TraceparentError::kBadTraceId},
      {"00-4bf92f3577b34da6 3ce929d0e0e4736-" + span + "-01", TraceparentError::kBadTraceId},
      {"00-4BF92F3577B34DA6A3CE929D0E0E473z-" + span + "-01", TraceparentError::kBadTraceId},  // junk wins
      {"00-" + trace + "-00f067aa0ba902bx-01", TraceparentError::kBadParentId},
      {"00-" + trace + "-" + span + "-0g", TraceparentError::kBadFlags},
      {"00-" + trace + "-" + span + "--1", TraceparentError::kBadFlags},
      {"00-00000000000000000000000000000000-" + span + "-01", TraceparentError::kZeroTraceId},
      {"00-" + trace + "-0000000000000000-01", TraceparentError::kZeroParentId},
  };
  for (const MalformedCase& test_case : kCases) {
    const TraceparentResult parsed = ParseTraceparent(test_case.header);
    ASSERT_FALSE(parsed.ok()) << "accepted: '" << test_case.header << "'";
    EXPECT_EQ(parsed.error(), test_case.error) << "'" << test_case.header << "'";
  }
}

TEST(TraceContext, ErrorReasonsPrintAsDistinctWords) {
  std::ostringstream out;
  out << TraceparentError::kZeroTraceId << " " << TracestateError::kTooManyMembers;
  EXPECT_EQ(out.str(), "zero_trace_id too_many_members");

  std::set<std::string_view> names;
  for (int i = 0; i <= static_cast<int>(TraceparentError::kBadFlags); ++i) {
    const std::string_view name = TraceparentErrorName(static_cast<TraceparentError>(i));
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string_view::npos) << name;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(TraceparentError::kBadFlags) + 1);
  EXPECT_EQ(TraceOriginName(TraceOrigin::kAirflow), "airflow");
}

TEST(TraceContext, FormatsVersion00) {
  const TraceparentResult parsed = ParseTraceparent(kValid);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(FormatTraceparent(parsed->trace_id, parsed->parent_span_id, true), kValid);
  EXPECT_EQ(FormatTraceparent(parsed->trace_id, parsed->parent_span_id, false),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
}

TEST(TraceContext, InjectionRoundTrips) {
  RandomIdGenerator ids;
  for (int i = 0; i < 200; ++i) {
    const TraceId trace_id = ids.NewTraceId();
    const SpanId span_id = ids.NewSpanId();
    const bool sampled = (i % 2) == 0;
    const std::string header = FormatTraceparent(trace_id, span_id, sampled);
    EXPECT_EQ(header.size(), kTraceparentLength);
    const TraceparentResult parsed = ParseTraceparent(header);
    ASSERT_TRUE(parsed.ok()) << header << ": " << parsed.error();
    EXPECT_EQ(parsed->version, 0);
    EXPECT_EQ(parsed->trace_id, trace_id);
    EXPECT_EQ(parsed->parent_span_id, span_id);
    EXPECT_EQ(parsed->sampled(), sampled);
  }
}

// Tracestate.

std::string Members(int count) {
  std::string list;
  for (int i = 0; i < count; ++i) list += (i > 0 ? "," : "") + ("k" + std::to_string(i)) + "=v";
  return list;
}

TEST(Tracestate, AcceptsValidLists) {
  const std::vector<std::string> kValidLists = {
      "",
      "rojo=00f067aa0ba902b7",
      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
      " rojo=1 ,\tcongo=2\t",  // OWS around members
      "a=1,,b=2",              // empty members are tolerated
      ",",
      " , ,",
      "tenant@system=v",
      "0tenant@sys=v",  // a tenant id may start with a digit
      "a_-*/9=v",
      "a=hello world",  // inner spaces belong to the value
      "a= x",
      "a=" + std::string(256, 'x'),
      std::string(256, 'k') + "=v",
      std::string(241, 't') + "@" + std::string(14, 's') + "=v",
      "a=!\"#$%&'()*+-./:;<>?@[\\]^_`{|}~",  // every punctuation but ',' and '='
      Members(32),
      Members(32) + ",,, ,",  // empty members do not count toward 32
      "a=1,a@b=2,b@a=3",      // distinct keys
  };
  for (const std::string& list : kValidLists) {
    const std::optional<TracestateError> error = ValidateTracestate(list);
    EXPECT_FALSE(error.has_value()) << "'" << list << "': " << *error;
  }
}

struct InvalidTracestate {
  std::string list;
  TracestateError error;
};

TEST(Tracestate, RejectsInvalidLists) {
  const std::vector<InvalidTracestate> kCases = {
      {Members(33), TracestateError::kTooManyMembers},
      {"a", TracestateError::kMissingEquals},
      {"a=1,b", TracestateError::kMissingEquals},
      {"A=1", TracestateError::kBadKey},
      {"1a=1", TracestateError::kBadKey},
      {"a b=1", TracestateError::kBadKey},
      {"a =1", TracestateError::kBadKey},
      {"=1", TracestateError::kBadKey},
      {"a.b=1", TracestateError::kBadKey},
      {"t@=1", TracestateError::kBadKey},
      {"@s=1", TracestateError::kBadKey},
      {"t@S=1", TracestateError::kBadKey},
      {"t@1s=1", TracestateError::kBadKey},
      {"_t@s=1", TracestateError::kBadKey},
      {"t@" + std::string(15, 's') + "=1", TracestateError::kBadKey},
      {std::string(242, 't') + "@s=1", TracestateError::kBadKey},
      {"a@b@c=1", TracestateError::kBadKey},
      {std::string(257, 'k') + "=v", TracestateError::kBadKey},
      {"a=", TracestateError::kBadValue},
      {"a= ", TracestateError::kBadValue},
      {"a=b=c", TracestateError::kBadValue},
      {"a==", TracestateError::kBadValue},
      {"a=" + std::string(257, 'x'), TracestateError::kBadValue},
      {"a=x\x7f", TracestateError::kBadValue},
      {"a=x\ty", TracestateError::kBadValue},
      {"a=caf\xc3\xa9", TracestateError::kBadValue},
      {"a=1,b=2,a=3", TracestateError::kDuplicateKey},
      {"t@s=1,t@s=2", TracestateError::kDuplicateKey},
  };
  for (const InvalidTracestate& test_case : kCases) {
    const std::optional<TracestateError> error = ValidateTracestate(test_case.list);
    ASSERT_TRUE(error.has_value()) << "accepted: '" << test_case.list << "'";
    EXPECT_EQ(*error, test_case.error) << "'" << test_case.list << "'";
  }
}

// Extraction from metadata and resolution of the request's trace.

TEST(TraceContext, ExtractsClientContextWithTracestate) {
  const Headers headers = {{"traceparent", kValid}, {"tracestate", "rojo=1"}, {"tracestate", "congo=2"}};
  const ClientTraceContext client = ExtractClientContext(headers);
  ASSERT_TRUE(client.context.has_value());
  EXPECT_FALSE(client.traceparent_error.has_value());
  EXPECT_FALSE(client.tracestate_error.has_value());
  EXPECT_EQ(ToHex(client.context->trace_id), kTraceHex);
  EXPECT_EQ(ToHex(client.context->parent_span_id), kSpanHex);
  EXPECT_TRUE(client.context->sampled);
  EXPECT_TRUE(client.context->from_client());
  EXPECT_EQ(client.context->tracestate, "rojo=1,congo=2");
}

TEST(TraceContext, InvalidTracestateIsDroppedButTraceparentKept) {
  const Headers headers = {{"tracestate", "Bad=1"}, {"traceparent", kValid}};
  const ClientTraceContext client = ExtractClientContext(headers);
  ASSERT_TRUE(client.context.has_value());
  EXPECT_EQ(client.context->tracestate, "");
  EXPECT_EQ(client.tracestate_error, TracestateError::kBadKey);

  // Valid apart, invalid together: the combined list is what counts.
  const Headers duplicated = {{"traceparent", kValid}, {"tracestate", "a=1"}, {"tracestate", "a=2"}};
  EXPECT_EQ(ExtractClientContext(duplicated).tracestate_error, TracestateError::kDuplicateKey);
}

TEST(TraceContext, InvalidTraceparentIgnoresTracestate) {
  const Headers headers = {{"traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"},
                           {"tracestate", "Bad=1"}};
  const ClientTraceContext client = ExtractClientContext(headers);
  EXPECT_FALSE(client.context.has_value());
  EXPECT_EQ(client.traceparent_error, TraceparentError::kZeroTraceId);
  EXPECT_FALSE(client.tracestate_error.has_value());
}

TEST(TraceContext, TwoTraceparentsAreAmbiguous) {
  const Headers headers = {{"traceparent", kValid}, {"traceparent", kValid}};
  const ClientTraceContext client = ExtractClientContext(headers);
  EXPECT_FALSE(client.context.has_value());
  EXPECT_EQ(client.traceparent_error, TraceparentError::kMultipleHeaders);
}

TEST(TraceContext, NoTraceparentNoErrors) {
  const Headers headers = {{"tracestate", "a=1"}, {"x-airflow-dag-id", "etl"}};
  const ClientTraceContext client = ExtractClientContext(headers);
  EXPECT_FALSE(client.context.has_value());
  EXPECT_FALSE(client.traceparent_error.has_value());
  EXPECT_FALSE(client.tracestate_error.has_value());
}

TEST(TraceContext, ClientTraceparentWinsAndDecidesSampling) {
  const AirflowIdentity airflow{"etl", "load", "run", 1, -1};
  CountingIdGenerator ids;

  const Headers unsampled = {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"}};
  const RequestTraceContext context =
      ResolveTraceContext(ExtractClientContext(unsampled), airflow, ids, MakeSampler(1.0));
  EXPECT_EQ(context.origin, TraceOrigin::kClient);
  EXPECT_EQ(ToHex(context.trace_id), kTraceHex);
  EXPECT_EQ(ToHex(context.parent_span_id), kSpanHex);
  EXPECT_FALSE(context.sampled);  // even at ratio 1

  const Headers sampled = {{"traceparent", kValid}};
  EXPECT_TRUE(ResolveTraceContext(ExtractClientContext(sampled), airflow, ids, MakeSampler(0.0)).sampled);
  EXPECT_EQ(ids.trace_ids(), 0);
}

TEST(TraceContext, AirflowIdentityDerivesTheTrace) {
  const AirflowIdentity airflow{"etl", "load", "run", 1, -1};
  CountingIdGenerator ids;
  // An invalid traceparent falls through to the Airflow identity.
  const Headers headers = {{"traceparent", "garbage"}};
  const RequestTraceContext first =
      ResolveTraceContext(ExtractClientContext(headers), airflow, ids, MakeSampler(1.0));
  const RequestTraceContext second =
      ResolveTraceContext(ClientTraceContext{}, airflow, ids, MakeSampler(1.0));
  EXPECT_EQ(first.origin, TraceOrigin::kAirflow);
  EXPECT_FALSE(first.from_client());
  EXPECT_EQ(first.trace_id, DeriveTraceId(airflow));
  EXPECT_EQ(second.trace_id, first.trace_id);
  EXPECT_FALSE(IsValid(first.parent_span_id));
  EXPECT_TRUE(first.sampled);
  EXPECT_FALSE(ResolveTraceContext(ClientTraceContext{}, airflow, ids, MakeSampler(0.0)).sampled);
  EXPECT_EQ(ids.trace_ids(), 0);
}

TEST(TraceContext, OtherwiseANewTraceSampledByRatio) {
  CountingIdGenerator ids;
  const RequestTraceContext context =
      ResolveTraceContext(ClientTraceContext{}, std::nullopt, ids, MakeSampler(0.5));
  EXPECT_EQ(context.origin, TraceOrigin::kNew);
  EXPECT_EQ(ids.trace_ids(), 1);
  EXPECT_EQ(ToHex(context.trace_id), "00000000000000000000000000000001");
  EXPECT_TRUE(context.sampled);  // last 8 bytes are 1, below 2^63
  EXPECT_FALSE(IsValid(context.parent_span_id));
  EXPECT_EQ(context.tracestate, "");
}

// IdGenerator.

TEST(IdGenerator, RandomIdsAreValidAndDistinct) {
  RandomIdGenerator ids;
  std::set<TraceId> trace_ids;
  std::set<SpanId> span_ids;
  for (int i = 0; i < 10'000; ++i) {
    const TraceId trace_id = ids.NewTraceId();
    const SpanId span_id = ids.NewSpanId();
    ASSERT_TRUE(IsValid(trace_id));
    ASSERT_TRUE(IsValid(span_id));
    trace_ids.insert(trace_id);
    span_ids.insert(span_id);
  }
  EXPECT_EQ(trace_ids.size(), 10'000u);
  EXPECT_EQ(span_ids.size(), 10'000u);
}

TEST(IdGenerator, ThreadsDrawIndependentStreams) {
  RandomIdGenerator ids;  // one shared instance, as the proxy uses it
  constexpr int kThreads = 4;
  constexpr int kPerThread = 5'000;
  std::vector<std::vector<SpanId>> drawn(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ids, &drawn, t] {
      for (int i = 0; i < kPerThread; ++i) drawn[t].push_back(ids.NewSpanId());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<SpanId> all;
  for (const auto& per_thread : drawn) all.insert(per_thread.begin(), per_thread.end());
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kThreads * kPerThread));
}

}  // namespace
}  // namespace sparktrace::tracing
