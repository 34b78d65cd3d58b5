#include "tracing/store/postgres/index/postgres_attempt_keys.h"

#include <spdlog/fmt/fmt.h>

#include "tracing/store/postgres/client/pg_text.h"
#include "tracing/store/postgres/postgres_schema.h"

namespace sparktrace::tracing::store {
namespace {

std::string KeyText(const PartKey& key) {
  return fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", key.airflow ? 1 : 0, key.attempt.dag_id,
                     key.attempt.task_id, key.attempt.run_id, key.attempt.try_number, key.attempt.map_index,
                     key.trace_key);
}

}  // namespace

KeyArrays::KeyArrays(const std::set<PartKey>& keys) {
  for (const PartKey& key : keys) {
    airflow.push_back(key.airflow ? 1 : 0);
    dag_id.push_back(key.attempt.dag_id);
    task_id.push_back(key.attempt.task_id);
    run_id.push_back(key.attempt.run_id);
    try_number.push_back(key.attempt.try_number);
    map_index.push_back(key.attempt.map_index);
    trace_key.push_back(key.trace_key);
  }
}

std::vector<PgParam> KeyArrays::Params() const {
  return {IntArray(airflow),    TextArray(dag_id),   TextArray(task_id),  TextArray(run_id),
          IntArray(try_number), IntArray(map_index), TextArray(trace_key)};
}

Result<void> LockAttempts(PgConnection& db, const std::set<PartKey>& keys) {
  std::vector<std::string> key_texts;
  key_texts.reserve(keys.size());
  for (const PartKey& key : keys) key_texts.push_back(KeyText(key));
  auto locked =
      db.Query(fmt::format("SELECT pg_advisory_xact_lock({}, h) FROM (SELECT DISTINCT hashtext(t) AS h "
                           "FROM unnest($1::text[]) t ORDER BY 1) ordered",
                           kLockClassAttempt),
               {TextArray(key_texts)});
  if (!locked.ok()) return locked.error();
  return {};
}

}  // namespace sparktrace::tracing::store
