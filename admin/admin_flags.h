#pragma once
// The --admin-* limit flags (docs/admin-limits.md), defined once for `sparktrace proxy` and
// `sparktrace ui`: each command appends AdminFlagSpecs() to its own and reads them back with
// AdminLimitsFromFlags. Errors name the flag (exit 2).

#include <span>

#include "admin/admin_limits.h"
#include "common/flags.h"
#include "common/result.h"

namespace sparktrace::admin {

std::span<const FlagSpec> AdminFlagSpecs();

// The limits the flags give (defaults: AdminLimits{}), each checked against its range.
Result<AdminLimits> AdminLimitsFromFlags(const ParsedFlags& flags);

}  // namespace sparktrace::admin
