#pragma once
// TraceSummary: one line of a trace listing, as every trace store keeps it (maintained on every write)
// and as the renderers print it. Plain values; shared by tracing/store/span_store.h and
// tracing/trace_tree.h so that rendering does not depend on storage.

#include <cstdint>
#include <optional>
#include <string>

#include "tracing/span.h"

namespace sparktrace::tracing {

struct TraceSummary {
  TraceId trace_id{};
  // The root span's name (the earliest span without a parent). Until the root arrives (an Airflow
  // task's root span ends, and so is exported, last) it is the earliest span's name.
  std::string root_name;
  std::uint64_t start_time_unix_nano = 0;  // earliest start of any span
  std::uint64_t end_time_unix_nano = 0;    // latest end of any span
  std::uint64_t span_count = 0;
  std::uint64_t error_count = 0;  // spans with StatusCode::kError
  // Airflow identity, from the airflow.* attributes of the trace's spans; empty / nullopt when no span
  // carries them (work that did not come from an Airflow task).
  std::string dag_id;
  std::string task_id;
  std::string run_id;
  std::optional<std::int64_t> try_number;
};

}  // namespace sparktrace::tracing
