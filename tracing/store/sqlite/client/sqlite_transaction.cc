#include "tracing/store/sqlite/client/sqlite_transaction.h"

#include "tracing/store/sqlite/client/sqlite_connection.h"

namespace sparktrace::tracing::store {
namespace {

// Rolls an open transaction back unless dismissed after a successful COMMIT; also on early returns
// and if an exception unwinds through.
class RollbackGuard {
 public:
  explicit RollbackGuard(SqliteConnection& db) : connection_(db) {}
  ~RollbackGuard() {
    if (active_) (void)connection_.Exec("ROLLBACK");  // nothing more to do if even that fails
  }
  RollbackGuard(const RollbackGuard&) = delete;
  RollbackGuard& operator=(const RollbackGuard&) = delete;
  void Dismiss() { active_ = false; }

 private:
  SqliteConnection& connection_;
  bool active_ = true;
};

}  // namespace

// BEGIN IMMEDIATE takes the write lock up front, so lock contention shows as one busy wait at the
// start instead of a failure halfway through the batch.
Result<void> InWriteTransaction(SqliteConnection& db, const std::function<Result<void>()>& body) {
  if (auto begun = db.Exec("BEGIN IMMEDIATE"); !begun.ok()) return begun.error();
  RollbackGuard guard(db);
  if (auto done = body(); !done.ok()) return done.error();
  if (auto committed = db.Exec("COMMIT"); !committed.ok()) return committed.error();
  guard.Dismiss();
  return {};
}

}  // namespace sparktrace::tracing::store
