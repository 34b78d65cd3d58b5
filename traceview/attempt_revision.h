#pragma once
// The entity tag of an attempt's answer, from the store's revision of it rather than from the answer's
// bytes: so that a page polling an attempt that has not changed (If-None-Match) gets its 304 after one
// index query, without reading the spans or building the JSON (docs/trace-view-api.md, "Caching").
//
// The answer is a function of the task's index rows (the attempt's own row, its tries, neighbours and
// history: a row's indexed_unix_nano grows on every change of its figures, tracing/store/task_attempts.h),
// of the view's settings and of the binary that builds it; the tag covers all three. Pure; thread-safe.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "tracing/store/task_attempts.h"

namespace sparktrace::traceview {

// A strong tag, quoted ("\"r…\""), of the answer about rows[current] (the other rows are its tries,
// neighbours and history: two attempts of a task share them all): `view` is everything else the answer
// depends on (the settings, the download asked for, a salt that changes with the process so that no
// tag outlives the binary).
std::string AttemptRevisionTag(std::span<const tracing::store::TaskAttemptRow> rows, std::size_t current,
                               std::string_view view);

}  // namespace sparktrace::traceview
