#pragma once
// How the PostgreSQL store's span rows (schema version 3, postgres_schema.cc) are read and written
// where they differ from the row both backends share (tracing/store/span_rows/stored_span.h): ids are
// fixed-size columns (trace schema 13: a trace id a uuid, a span id a bigint; hex in SQL through the
// functions below, hex everywhere in C++), attributes bytea in the compact form or, in a row written
// before version 3, the bytes of its JSON text, and an "airflow.task" span's map index is a column of
// its own (task_map_index) for the upsert's replacement rule.
//
// Pure functions and constant SQL text; thread-safe.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/store/postgres/client/pg_connection.h"
#include "tracing/store/span_rows/stored_span.h"

namespace sparktrace::tracing::store {

// Ids since trace schema 13. A trace id is a uuid: its 16 bytes in their order, which is uuid's order
// too. A span id is a bigint: its 8 bytes read big-endian, top bit flipped, so that bigint order is the
// bytes' order (as the bytea before, and SQLite's BLOBs: a trace's spans that start together read in
// the same order from both stores). Both without bytea's length byte, which with 8-byte alignment cost
// every key entry of spans and traces 8 bytes (postgres_schema.cc, version 13).
//
// The SQL of an id column (or expression) as lower-case hex text: 32 digits for a trace, 16 for a span.
std::string TraceHexSql(std::string_view column);
std::string SpanHexSql(std::string_view column);
// The SQL of hex text (an expression or a parameter) as a stored id. Text with a character that is not
// a hex digit is an error of the statement, as decode(…, 'hex') made it before; hex of another length
// is an error for a trace id and NULL (no span) for a span id.
std::string TraceIdOfHexSql(std::string_view hex);
std::string SpanIdOfHexSql(std::string_view hex);
// A span id as its bigint column holds it (what SpanHexSql reads back as ToHex(id)).
std::int64_t StoredSpanId(const SpanId& id);

// A span row's trace, span and parent span ids as hex text (the parent NULL for a root): the first
// columns of every read of spans, here and in the task index's (index/postgres_index_reads.h).
extern const std::string kPostgresSpanIdReadColumns;
// What a read of spans selects, from kPostgresSpansWithSets, in StoredSpanColumns' order: the ids as
// hex text (kPostgresSpanIdReadColumns), the attributes as bytea (SpansOfResult reads either form), and the
// attribute set a row in the shared form names (rows/postgres_attribute_sets.h; NULL for any other row).
extern const std::string kPostgresSpanReadColumns;
// The SQL of the attribute set that attributes in the shared form name (the varint after their format
// byte: span_rows/shared/shared_attributes.h), NULL for attributes in any other form. Reads join
// attribute_sets on it: since trace schema 12 no column repeats it (spans.attribute_set cost a call's
// row 8 bytes).
std::string AttributeSetIdSql(std::string_view attributes);
// The spans with the set each names: what a read of whole spans selects from.
extern const std::string kPostgresSpansWithSets;

// Trace schema 16: a span row in the shared form whose Airflow identity its attribute set holds (every
// identity key is shareable: the set holds all of it) keeps kIdentityInSetMarker in dag_id and NULL in
// task_id, run_id and try_number; its set row holds the identity (attribute_sets.set_dag_id, …, which
// the writer numbering the set fills). dag_id IS NOT NULL still picks every span with identity. The
// task index's reads of stored spans decode the attributes of those rows and take a marked row's
// identity from them (index/postgres_index_reads.cc); the summaries' recomputation joins the set
// (SpanIdentitySql). An "airflow.task" span keeps its identity: the upsert's replacement rule compares
// it (postgres_batch_copy.cc). A real dag id '' reads right either way: the attributes give '' back.
inline constexpr std::string_view kIdentityInSetMarker = "";
// Whether the writer marks `row` (its attributes as written, after the sets were numbered).
bool IdentityInSet(const StoredSpanRow& row);
// The SQL of a span's identity column (`column`: dag_id, task_id, run_id, try_number) for a read of
// `spans` LEFT JOINed with `sets` (attribute_sets) on SpanIdentitySetJoinSql.
std::string SpanIdentitySql(std::string_view spans, std::string_view sets, std::string_view column);
// The join condition of the set a marked row names (no set for any other row).
std::string SpanIdentitySetJoinSql(std::string_view spans, std::string_view sets);

// A span's events as the row keeps them: '' for none (trace schema 16; '[]' before, which reads the
// same), else the JSON array.
std::string_view StoredEvents(const StoredSpanRow& row);

// Every column a write fills, in SpanCopy's order (postgres_batch_copy.h).
inline constexpr std::string_view kPostgresSpanWriteColumns =
    "trace_id, span_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, "
    "status_message, trace_state, attributes, events, operation_id, dag_id, task_id, run_id, try_number, "
    "task_map_index";

// SQL for the trace ids of a text[] parameter of hex ids (`param`, "$1"): for `trace_id = ANY(…)`.
std::string IdsFromHexSql(std::string_view param);

// The spans of a result whose columns from `first` on are kPostgresSpanReadColumns, in its order.
// A row's attributes are compact or shared when their first byte says so, else the JSON text a
// version-2 row held; malformed rows are kInternal errors naming the span.
Result<std::vector<Span>> SpansOfResult(const PgResult& result, int first = 0);

// Whether stored attribute bytes are in the compact or the shared form (their format byte) rather than
// the JSON text of a row written before version 3.
bool AreCompactAttributes(std::string_view bytes);
// The attributes of a stored row from the text form of its bytea column (any form) and of the set it
// names (nullopt: none); kInternal, naming the span, when they are none of them.
Result<std::vector<Attribute>> StoredAttributes(std::string_view bytea_text,
                                                std::optional<std::string_view> set_text,
                                                std::string_view span_hex);

// The map index an "airflow.task" span is replaced under (its airflow.map_index attribute as the task
// index takes it: an integer, a double truncated or text holding an integer); nullopt when it has none
// or the span is not an "airflow.task" span.
std::optional<std::int64_t> TaskMapIndexOf(const Span& span);

}  // namespace sparktrace::tracing::store
