#include "spark_connect/relation_type.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <utility>

namespace sparktrace::spark_connect {
namespace {

// Relation.rel_type of Spark's relations.proto (4.1), by field number.
constexpr auto kRelationTypes = std::to_array<std::pair<std::int32_t, std::string_view>>({
    {2, "read"},
    {3, "project"},
    {4, "filter"},
    {5, "join"},
    {6, "set_op"},
    {7, "sort"},
    {8, "limit"},
    {9, "aggregate"},
    {10, "sql"},
    {11, "local_relation"},
    {12, "sample"},
    {13, "offset"},
    {14, "deduplicate"},
    {15, "range"},
    {16, "subquery_alias"},
    {17, "repartition"},
    {18, "to_df"},
    {19, "with_columns_renamed"},
    {20, "show_string"},
    {21, "drop"},
    {22, "tail"},
    {23, "with_columns"},
    {24, "hint"},
    {25, "unpivot"},
    {26, "to_schema"},
    {27, "repartition_by_expression"},
    {28, "map_partitions"},
    {29, "collect_metrics"},
    {30, "parse"},
    {31, "group_map"},
    {32, "co_group_map"},
    {33, "with_watermark"},
    {34, "apply_in_pandas_with_state"},
    {35, "html_string"},
    {36, "cached_local_relation"},
    {37, "cached_remote_relation"},
    {38, "common_inline_user_defined_table_function"},
    {39, "as_of_join"},
    {40, "common_inline_user_defined_data_source"},
    {41, "with_relations"},
    {42, "transpose"},
    {43, "unresolved_table_valued_function"},
    {44, "lateral_join"},
    {45, "chunked_cached_local_relation"},
    {46, "relation_changes"},
    {47, "nearest_by_join"},
    {48, "zip"},
    {49, "graph_frames"},
    {90, "fill_na"},
    {91, "drop_na"},
    {92, "replace"},
    {100, "summary"},
    {101, "crosstab"},
    {102, "describe"},
    {103, "cov"},
    {104, "corr"},
    {105, "approx_quantile"},
    {106, "freq_items"},
    {107, "sample_by"},
    {200, "catalog"},
    {300, "ml_relation"},
    {998, "extension"},
    {999, "unknown"},
});

}  // namespace

std::string RelationTypeName(std::int32_t field_number) {
  if (field_number == 0) return {};
  const auto found = std::find_if(kRelationTypes.begin(), kRelationTypes.end(),
                                  [field_number](const auto& entry) { return entry.first == field_number; });
  if (found != kRelationTypes.end()) return std::string(found->second);
  return "rel_type_" + std::to_string(field_number);
}

}  // namespace sparktrace::spark_connect
