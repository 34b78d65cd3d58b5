#pragma once
// The values the trace view's API reads from a request (docs/trace-view-api.md), checked before any
// of them reaches a store. A value a store cannot take as it is — bytes that are not UTF-8, which
// PostgreSQL refuses with an error of its own, or a time whose nanoseconds overflow 64 bits, which
// SQLite would compare wrapped around — is the client's mistake: a 400 that names the parameter and
// its rule, never a store error. Messages never repeat the value (it is the client's, and may be
// anything). Pure functions; thread-safe.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "tracing/airflow_identity.h"
#include "tracing/span.h"
#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

// since and until: epoch milliseconds whose nanoseconds still fit the signed 64-bit integers both
// stores keep times in: 0 to 9,223,372,036,854 (the year 2262).
inline constexpr std::int64_t kMaxEpochMs = std::numeric_limits<std::int64_t>::max() / 1'000'000;
inline constexpr std::int64_t kMaxTaskListLimit = 200;
// An id in an attempt's address (dag, task, run): whatever a store may hold, Unicode included (the
// address must reach every stored attempt), as UTF-8 of at most Airflow's 250 characters.
inline constexpr std::size_t kMaxAddressIdCharacters = tracing::kMaxAirflowIdLength;

// What /api/v1/tasks asks for: the store's filter and the search text (`q`), if any.
struct TaskListQuery {
  tracing::store::TaskAttemptFilter filter;
  std::optional<std::string> search;
};

// /api/v1/tasks's raw query: dag, task (Airflow's id rules), state, since, until, q, limit, offset,
// sort; empty values count as absent, other parameters are ignored. kInvalidArgument naming the first
// bad parameter.
Result<TaskListQuery> ParseTaskListQuery(std::string_view query);

// An attempt address's dag, task or run id (decoded): empty, or UTF-8 text (no NUL, nothing
// overlong, no surrogates) of at most kMaxAddressIdCharacters characters.
Result<void> CheckAddressId(std::string_view name, std::string_view value);
// try: a decimal integer from 0 to 2^31 - 1, as Airflow counts tries.
Result<std::int64_t> ParseTryNumber(std::string_view name, std::string_view text);
// map: -1 (not mapped) or a decimal integer from 0 to 2^31 - 1.
Result<std::int64_t> ParseMapIndex(std::string_view name, std::string_view text);

// The span a /api/v1/traces/<trace id>/sql-plan request names: its raw query's `span`, 16 hex
// digits (a span id as the attempt JSON writes it). kInvalidArgument naming `span` otherwise.
Result<tracing::SpanId> ParseSqlPlanQuery(std::string_view query);

// Whether `text` is well-formed UTF-8 without NUL; `characters` receives its code point count.
bool IsUtf8Text(std::string_view text, std::size_t& characters);

}  // namespace sparktrace::traceview
