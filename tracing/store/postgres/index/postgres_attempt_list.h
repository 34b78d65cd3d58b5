#pragma once
// A page of the PostgreSQL store's task list (tracing/store/task_attempts.h): the task_attempts rows and
// the attempts their trace's summary holds (task_index/task_index.h, SummaryHoldsAttempt), filtered,
// ordered and counted as one list.
//
// Threads: the caller's, on its connection.

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::tracing::store {

Result<TaskAttemptPage> ListPostgresTaskAttempts(PgConnection& db, const TaskAttemptFilter& filter);

}  // namespace sparktrace::tracing::store
