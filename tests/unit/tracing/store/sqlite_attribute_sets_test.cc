// The SQLite store's attribute sets (sqlite/rows/sqlite_attribute_sets.h) through the store: what
// rows and sets a session's calls write, that every read (the trace, the SQL function) gets the
// attributes back exactly, and which sets retention removes.
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/sqlite_store_file_test.h"
#include "tests/unit/tracing/store/store_test_spans.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/sqlite_attribute_function.h"
#include "tracing/store/sqlite/sqlite_span_store.h"

namespace sparktrace::tracing::store {
namespace {

using namespace testing_spans;  // NOLINT(google-build-using-namespace): test helpers

class SqliteAttributeSetsTest : public SqliteStoreFileTest {
 protected:
  std::int64_t SetsTestCount(const std::string& sql) {
    auto db = SqliteConnection::Open(path_, SQLITE_OPEN_READONLY);
    EXPECT_TRUE(db.ok());
    EXPECT_TRUE(RegisterAttributeFunction(*db).ok());
    auto count = db->QueryInt64(sql);
    EXPECT_TRUE(count.ok()) << sql << ": " << (count.ok() ? "" : count.error().ToString());
    return count.ok() ? *count : -1;
  }

  void ExpectReadsBack(SpanStore& store, const Span& written) {
    auto read = store.GetTrace(written.trace_id);
    ASSERT_TRUE(read.ok()) << read.error().ToString();
    ASSERT_EQ(read->size(), 1U);
    ExpectSpanEq(read->front(), written);
  }
};

TEST_F(SqliteAttributeSetsTest, ASessionsCallsShareOneSetFromTheirSecondAndReadBackExactly) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  std::vector<Span> calls;
  for (std::uint32_t trace = 1; trace <= 20; ++trace)
    calls.push_back(SessionCall(trace, "s-1", kBase + trace * kMs));
  calls.push_back(SessionCall(21, "s-2", kBase));
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin(), calls.begin() + 10)).ok());
  ASSERT_TRUE(store->Write(std::vector<Span>(calls.begin() + 10, calls.end())).ok());

  // s-1's first call keeps the compact row, its 19 others name one set; s-2's one call has none (a
  // client that opens a session for every call gets no set row for each).
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM spans WHERE substr(attributes, 1, 1) = x'02'"), 19);
  for (const Span& call : calls) ExpectReadsBack(*store, call);
  // A reader in another process (its own object), and the SQL function for a key in the set and one not.
  StoreOptions reader_options;
  reader_options.read_only = true;
  auto reader = OpenFileStore(reader_options);
  ASSERT_NE(reader, nullptr);
  ExpectReadsBack(*reader, calls.back());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM spans WHERE sparktrace_attribute(attributes, "
                          "'spark.connect.session_id') = 's-1'"),
            20);
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM spans WHERE sparktrace_attribute(attributes, "
                          "'network.peer.port') = 40021"),
            1);
}

TEST_F(SqliteAttributeSetsTest, RetentionRemovesASetOnlyOnceNoStoredSpanCanNameIt) {
  StoreOptions options;
  options.max_age = std::chrono::hours(24);
  auto store = OpenFileStore(options);
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
  ASSERT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 2);

  // Within the lease both stay, though no stored span names "old" any more.
  auto soon = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::minutes(10));
  ASSERT_TRUE(soon.ok()) << soon.error().ToString();
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM traces"), 1);
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 2);

  // Past it, "old" goes: every stored span started more than a lease after its last use. "kept"
  // stays: a stored span names it.
  auto later = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(3));
  ASSERT_TRUE(later.ok()) << later.error().ToString();
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*store, kept_call);

  // Met again, "old" is a set anew (a new id: ids are never reused) and its calls read back.
  const Span again = SessionCall(4, "old", now + kMs);
  ASSERT_TRUE(store->Write(std::vector<Span>{again}).ok());
  EXPECT_EQ(SetsTestCount("SELECT max(set_id) FROM attribute_sets"), 3);
  ExpectReadsBack(*store, again);
  ExpectReadsBack(*store, kept_call);

  // Once every trace is gone, so is every set whose lease is over.
  auto last = store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(72));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM traces"), 0);
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 0);
}

TEST_F(SqliteAttributeSetsTest, ASetAnotherWriterHoldsSurvivesItsRetention) {
  StoreOptions options;
  options.max_age = std::chrono::hours(24);
  auto writer = OpenFileStore(options);
  auto other = OpenFileStore(options);
  ASSERT_NE(writer, nullptr);
  ASSERT_NE(other, nullptr);
  const std::uint64_t now = NowNanos();
  ASSERT_TRUE(writer
                  ->Write(std::vector<Span>{SessionCall(1, "s-1", now - 3 * kDayNanos),
                                            SessionCall(3, "s-1", now - 3 * kDayNanos)})
                  .ok());
  ASSERT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  // The other writer's retention deletes the only trace naming the set, within the lease.
  ASSERT_TRUE(other->EnforceRetention(std::chrono::system_clock::now() + std::chrono::minutes(20)).ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM traces"), 0);
  // The first writer still names the set from its cache: it is there.
  const Span next = SessionCall(2, "s-1", now);
  ASSERT_TRUE(writer->Write(std::vector<Span>{next}).ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*other, next);
}

TEST_F(SqliteAttributeSetsTest, AWriteThatFailsTakesItsNewSetsWithIt) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  {
    // The spans' insert fails after the batch numbered its set (at its second call), in the same
    // transaction.
    auto raw = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(
        raw->Exec("CREATE TRIGGER planted BEFORE INSERT ON spans BEGIN SELECT RAISE(ABORT, 'planted'); END")
            .ok());
  }
  EXPECT_FALSE(
      store->Write(std::vector<Span>{SessionCall(1, "s-1", kBase), SessionCall(3, "s-1", kBase)}).ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 0);
  {
    auto raw = SqliteConnection::Open(path_, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(raw.ok());
    ASSERT_TRUE(raw->Exec("DROP TRIGGER planted").ok());
  }
  // The writer numbers the set anew rather than naming the id that went with the transaction.
  const Span call = SessionCall(2, "s-1", kBase);
  ASSERT_TRUE(store->Write(std::vector<Span>{call}).ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*store, call);
}

TEST_F(SqliteAttributeSetsTest, ASpanFromAClockAheadKeepsItsSetAsLongAsItIsStored) {
  StoreOptions options;
  options.max_age = std::chrono::hours(24);
  auto store = OpenFileStore(options);
  ASSERT_NE(store, nullptr);
  // Started three hours from now (the client's clock is ahead): its set's lease counts from its start.
  const Span ahead = SessionCall(1, "ahead", NowNanos() + 3 * kHourNanos);
  const Span ahead_again = SessionCall(2, "ahead", NowNanos() + 3 * kHourNanos);
  ASSERT_TRUE(store->Write(std::vector<Span>{ahead, ahead_again}).ok());
  ASSERT_TRUE(store->EnforceRetention(std::chrono::system_clock::now() + std::chrono::hours(2)).ok());
  EXPECT_EQ(SetsTestCount("SELECT count(*) FROM attribute_sets"), 1);
  ExpectReadsBack(*store, ahead_again);
}

}  // namespace
}  // namespace sparktrace::tracing::store
