#pragma once
// Opens the store a --store value names (tracing/store/store_location.h) with the backend it names.

#include <memory>

#include "common/result.h"
#include "tracing/store/span_store.h"
#include "tracing/store/store_location.h"

namespace sparktrace::tracing::store {

Result<std::unique_ptr<SpanStore>> OpenSpanStore(const StoreLocation& location, const StoreOptions& options);

}  // namespace sparktrace::tracing::store
