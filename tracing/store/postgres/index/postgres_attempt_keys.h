#pragma once
// Attempts' keys as PostgreSQL's task index statements take them: parallel arrays for unnest(), the
// CTE and join that match them, and the attempts' advisory locks (postgres_schema.h, kLockClassAttempt),
// which every change to an attempt's row takes first, in lock-id order.
//
// Threads: the connection's, inside the caller's transaction.

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/task_index/attempt_parts.h"

namespace sparktrace::tracing::store {

// The keys as parallel arrays, for unnest(): Params() are $1-$7 of kKeysCte.
struct KeyArrays {
  std::vector<std::int64_t> airflow, try_number, map_index;
  std::vector<std::string> dag_id, task_id, run_id, trace_key;
  explicit KeyArrays(const std::set<PartKey>& keys);
  std::vector<PgParam> Params() const;
};

inline constexpr std::string_view kKeysCte =
    "WITH keys AS (SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::bigint[], "
    "$6::bigint[], $7::text[]) AS k(airflow, dag_id, task_id, run_id, try_number, map_index, trace_key))";
inline constexpr std::string_view kMatchKey =
    "p.airflow = k.airflow AND p.dag_id = k.dag_id AND p.task_id = k.task_id AND p.run_id = k.run_id AND "
    "p.try_number = k.try_number AND p.map_index = k.map_index AND p.trace_key = k.trace_key";

// Takes these attempts' advisory locks (held to the end of the transaction; taking one twice is free).
Result<void> LockAttempts(PgConnection& db, const std::set<PartKey>& keys);

}  // namespace sparktrace::tracing::store
