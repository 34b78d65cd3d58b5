#pragma once
// Each span's parent as an index into the same list: the tree every trace view computation walks
// (the page's order, the critical path, an attempt's selection). Pure function; thread-safe.

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "tracing/span.h"

namespace sparktrace::traceview {

// nullopt for a root, a parent that is not in `spans` (the client's span, another attempt's) and a
// span that names itself; a repeated span id resolves to its first occurrence.
std::vector<std::optional<std::size_t>> ParentIndices(std::span<const tracing::Span> spans);

}  // namespace sparktrace::traceview
