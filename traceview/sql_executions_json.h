#pragma once
// The attempt JSON's "sql_executions" (docs/trace-view-api.md): one summary per spark.sql.execution
// span (listener/correlate/sql_execution_span.h), by start time: its ids, description, times, top
// operators and where its plan is served (SqlPlanApiHref). The plans themselves are not inlined
// (an attempt may hold hundreds of executions, each plan up to --sql-plan-max-bytes); the page
// fetches one when it is opened.
//
// Pure functions; thread-safe.

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/json_writer.h"
#include "tracing/span.h"

namespace sparktrace::traceview {

// Writes the array. `hex_ids[i]` is spans[i]'s id in hex, `parent` ParentIndices(spans).
void WriteSqlExecutions(JsonWriter& out, std::span<const tracing::Span> spans,
                        const std::vector<std::string>& hex_ids,
                        const std::vector<std::optional<std::size_t>>& parent);

}  // namespace sparktrace::traceview
