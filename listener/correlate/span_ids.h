#pragma once
// Deterministic trace and span ids for the spans built from driver events.
//
// Spans of a job, stage attempt or phase interval are emitted again whenever newer events change
// them (a job that ends after its operation span was exported, a stage whose tasks arrive late).
// Deriving their ids from what they describe, instead of drawing random ones, makes every
// emission carry the same (trace id, span id), so stores that replace by that pair (the SQLite
// span store does) keep the newest version instead of duplicates.
//
// Ids are the leading bytes of SHA-256 over a versioned, '\x1f'-separated key: the application id
// and attempt, the kind and the numbers of the thing, and the parent they are emitted under (the
// same job must get distinct span ids under two different operation spans). Never all zeros.
//
// Pure functions; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "tracing/span.h"

namespace sparktrace::listener::correlate {

// The application a span comes from: "<app id>" plus "/<attempt>" for multi-attempt applications.
std::string ApplicationKey(std::string_view app_id, const std::optional<std::string>& attempt_id);

// The trace of an application without Spark Connect: one per application attempt.
tracing::TraceId ApplicationTraceId(std::string_view application_key);

// A span id for `what` (e.g. "job/3", "stage/4/1", "phase/compute/0") of an application, emitted
// under the span `parent`.
tracing::SpanId DerivedSpanId(std::string_view application_key, const tracing::SpanId& parent,
                              std::string_view what);

}  // namespace sparktrace::listener::correlate
