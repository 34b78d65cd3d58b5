// The SQLite store's attribute sets (sqlite/rows/sqlite_attribute_sets.h) through the store: what
// rows and sets a session's calls write, that every read (the trace, the SQL function) gets the
// attributes back exactly, and that a failed write takes its new sets with it. Retention's rules hold
// on both backends: store_attribute_sets_test.cc.
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"

#include <gtest/gtest.h>
#include <spdlog/fmt/fmt.h>

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
};

TEST_F(SqliteAttributeSetsTest, ASessionsCallsShareOneSetFromTheirSecondAndReadBackExactly) {
  auto store = OpenFileStore();
  ASSERT_NE(store, nullptr);
  const std::vector<Span> calls = TwentyCallsOfASessionAndOneOfAnother();
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

}  // namespace
}  // namespace sparktrace::tracing::store
