#pragma once
// The name of a Spark Connect Relation's type (its `rel_type` oneof field), for spans: what kind of
// query a root plan is (`aggregate`, `join`, `sql`, `read`, ...). Field numbers are facts of
// Spark's relations.proto; Spark never reuses one, so one table serves every version.

#include <cstdint>
#include <string>

namespace sparktrace::spark_connect {

// The proto field name ("set_op", "fill_na"), or "rel_type_<n>" for a number this table does not
// know (a newer Spark); "" for 0 (no relation).
std::string RelationTypeName(std::int32_t field_number);

}  // namespace sparktrace::spark_connect
