#include "tracing/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tracing/airflow_identity.h"
#include "tracing/id_generator.h"

namespace sparktrace::tracing {
namespace {

// A trace id whose last 8 bytes are `low`, big-endian; the first 8 are arbitrary non-zero filler.
TraceId IdWithLow(std::uint64_t low) {
  TraceId id{};
  for (std::size_t i = 0; i < 8; ++i) id[i] = static_cast<std::uint8_t>(0xa0 + i);
  for (std::size_t i = 0; i < 8; ++i) id[8 + i] = static_cast<std::uint8_t>(low >> (56 - 8 * i));
  return id;
}

Sampler MakeSampler(double ratio) {
  Result<Sampler> sampler = Sampler::Create(ratio);
  EXPECT_TRUE(sampler.ok()) << ratio;
  return std::move(sampler).value();
}

TEST(Sampler, CreateValidatesRatio) {
  for (double ratio : {0.0, 1e-9, 0.5, 1.0}) EXPECT_TRUE(Sampler::Create(ratio).ok()) << ratio;
  for (double ratio : {-0.01, 1.01, -1.0, 2.0, std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    const Result<Sampler> sampler = Sampler::Create(ratio);
    ASSERT_FALSE(sampler.ok()) << ratio;
    EXPECT_EQ(sampler.error().code, ErrorCode::kInvalidArgument);
  }
}

TEST(Sampler, ParsesRatioFlag) {
  EXPECT_EQ(*ParseSampleRatio("0"), 0.0);
  EXPECT_EQ(*ParseSampleRatio("1"), 1.0);
  EXPECT_EQ(*ParseSampleRatio("0.25"), 0.25);
  EXPECT_EQ(*ParseSampleRatio("1e-3"), 0.001);
  for (const char* bad : {"", "abc", "0.5x", " 0.5", "0.5 ", "1.5", "-0.1", "nan", "inf", "50%"}) {
    const Result<double> ratio = ParseSampleRatio(bad);
    ASSERT_FALSE(ratio.ok()) << bad;
    EXPECT_NE(ratio.error().message.find("--sample-ratio"), std::string::npos);
  }
}

TEST(Sampler, RatioZeroSamplesNothingAndOneEverything) {
  const Sampler none = MakeSampler(0.0);
  const Sampler all = MakeSampler(1.0);
  for (std::uint64_t low : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 63,
                            std::numeric_limits<std::uint64_t>::max()}) {
    EXPECT_FALSE(none.ShouldSampleRoot(IdWithLow(low))) << low;
    EXPECT_TRUE(all.ShouldSampleRoot(IdWithLow(low))) << low;
  }
}

TEST(Sampler, ComparesLastEightBytesBigEndianWithRatioTimesTwoToThe64) {
  const Sampler half = MakeSampler(0.5);  // threshold 2^63
  EXPECT_TRUE(half.ShouldSampleRoot(IdWithLow(0)));
  EXPECT_TRUE(half.ShouldSampleRoot(IdWithLow((std::uint64_t{1} << 63) - 1)));
  EXPECT_FALSE(half.ShouldSampleRoot(IdWithLow(std::uint64_t{1} << 63)));
  EXPECT_FALSE(half.ShouldSampleRoot(IdWithLow(std::numeric_limits<std::uint64_t>::max())));

  const Sampler quarter = MakeSampler(0.25);  // threshold 2^62
  EXPECT_TRUE(quarter.ShouldSampleRoot(IdWithLow((std::uint64_t{1} << 62) - 1)));
  EXPECT_FALSE(quarter.ShouldSampleRoot(IdWithLow(std::uint64_t{1} << 62)));

  // Big-endian: 0x80 in the last byte is a small number, in byte 8 a large one.
  TraceId small{};
  small[15] = 0x80;
  EXPECT_TRUE(half.ShouldSampleRoot(small));
  TraceId large{};
  large[8] = 0x80;
  large[15] = 0x01;
  EXPECT_FALSE(half.ShouldSampleRoot(large));

  // The first 8 bytes play no part.
  TraceId other_high = IdWithLow(1);
  other_high[0] = 0xff;
  EXPECT_EQ(half.ShouldSampleRoot(other_high), half.ShouldSampleRoot(IdWithLow(1)));
}

TEST(Sampler, HalfOfDerivedAirflowTracesAreSampled) {
  const Sampler half = MakeSampler(0.5);
  const Sampler tenth = MakeSampler(0.1);
  constexpr int kTraces = 20'000;
  int sampled_half = 0;
  int sampled_tenth = 0;
  for (int i = 0; i < kTraces; ++i) {
    const TraceId id = DeriveTraceId(AirflowIdentity{"etl", "task_" + std::to_string(i), "run", 1, -1});
    sampled_half += half.ShouldSampleRoot(id) ? 1 : 0;
    sampled_tenth += tenth.ShouldSampleRoot(id) ? 1 : 0;
  }
  // Binomial standard deviation is ~0.0035 and ~0.0021 here; the bounds allow > 5 of them.
  EXPECT_NEAR(static_cast<double>(sampled_half) / kTraces, 0.5, 0.02);
  EXPECT_NEAR(static_cast<double>(sampled_tenth) / kTraces, 0.1, 0.012);
}

TEST(Sampler, HalfOfRandomTracesAreSampled) {
  const Sampler half = MakeSampler(0.5);
  RandomIdGenerator ids;
  constexpr int kTraces = 20'000;
  int sampled = 0;
  for (int i = 0; i < kTraces; ++i) sampled += half.ShouldSampleRoot(ids.NewTraceId()) ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(sampled) / kTraces, 0.5, 0.025);  // ~7 standard deviations
}

TEST(Sampler, DecisionIsStableAndMonotonicInRatio) {
  const AirflowIdentity identity{"etl", "load", "run", 1, -1};
  const TraceId id = DeriveTraceId(identity);
  // Every operation of one task attempt (and every replica, every sampler instance) agrees.
  EXPECT_EQ(MakeSampler(0.3).ShouldSampleRoot(id),
            MakeSampler(0.3).ShouldSampleRoot(DeriveTraceId(identity)));
  // Once sampled at some ratio, a trace stays sampled at any higher ratio.
  bool was_sampled = false;
  for (int step = 0; step <= 100; ++step) {
    const bool sampled = MakeSampler(step / 100.0).ShouldSampleRoot(id);
    EXPECT_TRUE(sampled || !was_sampled) << "ratio " << step / 100.0;
    was_sampled = was_sampled || sampled;
  }
  EXPECT_TRUE(was_sampled);
}

TEST(Sampler, ParentDecidesWhenPresent) {
  const TraceId id = IdWithLow(0);  // sampled by any positive ratio
  EXPECT_TRUE(MakeSampler(0.0).ShouldSample(id, true));
  EXPECT_FALSE(MakeSampler(1.0).ShouldSample(id, false));
  EXPECT_TRUE(MakeSampler(0.5).ShouldSample(id, std::nullopt));
  EXPECT_FALSE(MakeSampler(0.0).ShouldSample(id, std::nullopt));
  EXPECT_DOUBLE_EQ(MakeSampler(0.5).ratio(), 0.5);
}

}  // namespace
}  // namespace sparktrace::tracing
