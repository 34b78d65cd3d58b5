// The attribute sets' retention on both backends (sqlite/rows/sqlite_attribute_sets.h and
// postgres/rows/postgres_attribute_sets.h lease a set the same way): which sets retention removes, that
// a set another writer names from its cache survives a retention within the lease, and that a span
// from a clock ahead keeps its set as long as it is stored. Each backend's own suite tests its rows.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/store_test_backends.h"
#include "tests/unit/tracing/store/store_test_spans.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class StoreAttributeSets : public testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override { ASSERT_TRUE(backend_.Create(GetParam())) << backend_.problem(); }
  void TearDown() override { backend_.Destroy(); }

  std::int64_t Count(const std::string& sql) { return backend_.Count(sql); }

  static StoreOptions KeepingADay() {
    StoreOptions options;
    options.max_age = std::chrono::hours(24);
    return options;
  }

  TestBackend backend_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreAttributeSets,
                         testing::Values(StoreBackend::kSqlite, StoreBackend::kPostgres),
                         [](const testing::TestParamInfo<StoreBackend>& param) {
                           return BackendName(param.param);
                         });

TEST_P(StoreAttributeSets, RetentionRemovesASetOnlyOnceNoStoredSpanCanNameIt) {
  auto store = backend_.Open(KeepingADay());
  ASSERT_NE(store, nullptr);
  const std::uint64_t now = NowNanos();
  const std::uint64_t days_ago = now - 3 * kDayNanos;
  // Session "old" only in traces retention deletes; "kept" in one it deletes and in one it keeps,
  // which starts 90 minutes from now (a client's clock ahead: the one way a test can have a span
  // start well after a set's last use without waiting for it). Each session's second call names
  // its set.
  const Span old_call = SessionCall(1, "old", days_ago);
  const Span old_call_again = SessionCall(5, "old", days_ago);
  const Span kept_old_call = SessionCall(2, "kept", days_ago);
  const Span kept_call = SessionCall(3, "kept", now + 90 * kMinuteNanos);
  ASSERT_TRUE(store->Write(std::vector<Span>{old_call, old_call_again, kept_old_call, kept_call}).ok());
  ASSERT_EQ(Count("SELECT count(*) FROM attribute_sets"), 2);

  // Within the lease both stay, though no stored span names "old" any more.
  auto soon = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::minutes(10));
  ASSERT_TRUE(soon.ok()) << soon.error().ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM traces"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 2);

  // Past it, "old" goes: every stored span started more than a lease after its last use. "kept"
  // stays: a stored span names it.
  auto later = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(3));
  ASSERT_TRUE(later.ok()) << later.error().ToString();
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*store, kept_call);

  // Met again, "old" is a set anew, under an id never used before, and its calls read back.
  const std::int64_t highest = Count("SELECT max(set_id) FROM attribute_sets");
  const Span again = SessionCall(4, "old", now + kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{again}).ok());
  EXPECT_GT(Count("SELECT max(set_id) FROM attribute_sets"), highest);
  ExpectReadsBack(*store, again);
  ExpectReadsBack(*store, kept_call);

  // Once every trace is gone, so is every set whose lease is over.
  auto last = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(72));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(Count("SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 0);
}

TEST_P(StoreAttributeSets, ASetAnotherWriterHoldsSurvivesItsRetention) {
  auto writer = backend_.Open(KeepingADay());
  auto other = backend_.Open(KeepingADay());
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(other, nullptr);
  const std::uint64_t now = NowNanos();
  ASSERT_TRUE(writer
                  ->Write(std::vector<Span>{SessionCall(1, "s-1", now - 3 * kDayNanos),
                                            SessionCall(3, "s-1", now - 3 * kDayNanos)})
                  .ok());
  ASSERT_EQ(Count("SELECT count(*) FROM attribute_sets"), 1);
  // The other writer's retention deletes the only trace naming the set, within the lease.
  ASSERT_TRUE(other->EnforceRetention(std::chrono::system_clock::now() + std::chrono::minutes(20)).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM traces"), 0);
  // The first writer still names the set from its cache: it is there.
  const Span next = SessionCall(2, "s-1", now);
  ASSERT_TRUE(writer->Write(std::vector<Span>{next}).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*other, next);
}

TEST_P(StoreAttributeSets, ASpanFromAClockAheadKeepsItsSetAsLongAsItIsStored) {
  auto store = backend_.Open(KeepingADay());
  ASSERT_NE(store, nullptr);
  // Started three hours from now (the client's clock is ahead): its set's lease counts from its start.
  const Span ahead = SessionCall(1, "ahead", NowNanos() + 3 * kHourNanos);
  const Span ahead_again = SessionCall(2, "ahead", NowNanos() + 3 * kHourNanos);
  ASSERT_TRUE(store->Write(std::vector<Span>{ahead, ahead_again}).ok());
  ASSERT_TRUE(store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(2)).ok());
  EXPECT_EQ(Count("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*store, ahead_again);
}

}  // namespace
}  // namespace sparktrace::tracing::store
