#pragma once
// A page of the SQLite store's task list (tracing/store/task_attempts.h): the task_attempts rows and
// the attempts their trace's summary holds (sqlite_summary_attempts.h), filtered, ordered and counted
// as one list.
//
// Threads: runs on the connection's thread.

#include "common/result.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

class SqliteConnection;

Result<TaskAttemptPage> ListTaskAttempts(SqliteConnection& db, const TaskAttemptFilter& filter);

}  // namespace sparktrace::tracing::store
