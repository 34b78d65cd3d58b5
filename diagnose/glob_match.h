#pragma once
// Glob patterns of suppressions (suppression.h): `*` matches any run of characters (none
// included), `?` any one character, everything else itself. No character classes, no escapes, no
// special meaning for `/` or `.`: DAG and task ids are plain names ("etl.load_*").
//
// Pure function; thread-safe.

#include <string_view>

namespace sparktrace::diagnose {

bool GlobMatches(std::string_view pattern, std::string_view text);

}  // namespace sparktrace::diagnose
