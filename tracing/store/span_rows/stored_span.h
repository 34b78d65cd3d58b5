#pragma once
// How a span is laid out in a store row, the same for every backend: ids as lower-case hex text (the
// PostgreSQL store binds them as bytea from the span, postgres_span_columns.h),
// attributes as JSON text (tracing/attribute_json.h) or in the compact form (compact_attributes.h,
// what both stores write: SQLite since schema version 6, PostgreSQL since 3; rows written before keep
// their JSON), events as JSON text, and a few well-known attributes
// (tracing/span_vocabulary.h) copied into columns of their own for lookups by operation and
// by Airflow task. Backends bind and read these values; the layout is decided here once.
//
// Pure functions; the row views returned by ToStoredRow point into the span and into the row's
// own strings, so a row must not outlive the span it was made from.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "tracing/span.h"
#include "tracing/trace_summary.h"

namespace sparktrace::tracing::store {

class AttributeSetSource;

// How a row carries the span's attributes.
enum class AttributeEncoding {
  kJson,     // JSON text (the rows both stores wrote before their compact versions; tests)
  kCompact,  // compact_attributes.h bytes (SQLite: a BLOB, read in SQL by sparktrace_attribute;
             // PostgreSQL: bytea, read in C++ only, postgres_span_columns.h)
  kLater,    // left empty for the backend to encode: SQLite's shared form (sqlite/rows/
             // sqlite_attribute_sets.h), which needs the database to number a row's attribute set
};

struct StoredSpanRow {
  std::string trace_id;                       // 32 hex digits
  std::string span_id;                        // 16 hex digits
  std::optional<std::string> parent_span_id;  // nullopt for a root span
  std::string_view name;
  std::int64_t kind = 0;  // OTLP Span.SpanKind
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  std::int64_t status_code = 0;  // OTLP Status.StatusCode
  std::string_view status_message;
  std::string_view trace_state;
  std::string attributes;  // in the row's AttributeEncoding
  std::string events_json;
  // Copied from the well-known attributes; null when absent.
  const std::string* operation_id = nullptr;  // spark.connect.operation_id
  const std::string* session_id = nullptr;    // spark.connect.session_id
  const std::string* dag_id = nullptr;        // airflow.dag_id
  const std::string* task_id = nullptr;       // airflow.task_id
  const std::string* run_id = nullptr;        // airflow.run_id
  std::optional<std::int64_t> try_number;     // airflow.try_number (an integer, or text holding one)
};

// Whether a span can be stored at all: both ids valid (a zero id cannot be looked up).
bool IsStorable(const Span& span);
StoredSpanRow ToStoredRow(const Span& span, AttributeEncoding encoding = AttributeEncoding::kJson);
// The columns ToStoredRow copies from the well-known attributes (operation, session and Airflow
// identity), set from `attributes` (pointing into them) where they hold them.
void ExtractStoredColumns(const std::vector<Attribute>& attributes, StoredSpanRow& columns);

// A batch as the stores write it: the rows of its storable spans, each with the span it was made
// from (rows[i] from *sources[i]), and how many spans were left out (an all-zero id).
struct StoredBatch {
  std::vector<StoredSpanRow> rows;
  std::vector<const Span*> sources;
  std::size_t rejected = 0;
};
StoredBatch ToStoredBatch(std::span<const Span> spans, AttributeEncoding encoding = AttributeEncoding::kJson);

// A batch's rows grouped by trace (hex id), each span (hex id) at the index of its last version in
// the batch: a live span may come twice, and the later version is the one stored. The ids are the
// rows' own (string_view), so the rows must outlive the grouping: copies were two allocations a span.
using BatchSpans = std::map<std::string_view, std::size_t>;
using BatchTraces = std::map<std::string_view, BatchSpans>;
BatchTraces GroupByTrace(const std::vector<StoredSpanRow>& rows);

// The summary row of a trace from its spans: the root is the earliest span without a parent (else
// the earliest span), times and counts over all, the Airflow identity their maximum (as the stores'
// SQL recomputes it). For a trace a batch creates, computed from the batch alone.
struct TraceSummaryRow {
  std::string_view root_name;
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  std::int64_t span_count = 0;
  std::int64_t error_count = 0;
  const std::string* dag_id = nullptr;
  const std::string* task_id = nullptr;
  const std::string* run_id = nullptr;
  std::optional<std::int64_t> try_number;
};
TraceSummaryRow SummarizeTrace(const std::vector<StoredSpanRow>& rows, const BatchSpans& spans);

// The stored columns of one span, as a backend reads them (in the order of the schema's first 12
// columns), back into a Span. Malformed ids or JSON are kInternal errors naming the span.
struct StoredSpanColumns {
  std::string_view trace_id;  // hex, or the id's bytes when ids_binary
  std::string_view span_id;
  std::optional<std::string_view> parent_span_id;
  bool ids_binary = false;  // SQLite's BLOB ids (schema version 10); PostgreSQL reads its bytea as hex
  std::string_view name;    // as StoredName keeps it; NameOfStored reads every row's, older ones too
  std::int64_t kind = 0;
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  std::int64_t status_code = 0;
  std::string_view status_message;
  std::string_view trace_state;
  std::string_view attributes;  // JSON text, or compact bytes when attributes_compact
  bool attributes_compact = false;
  // Where a row in the shared form (span_rows/shared/shared_attributes.h) finds its set: null for a
  // backend that writes no such rows.
  AttributeSetSource* attribute_sets = nullptr;
  std::string_view events_json;
};
Result<Span> FromStoredColumns(const StoredSpanColumns& columns);

// A span's name as both stores' rows keep it, in `spans.name` and `traces.root_name`:
// - the span names sparktrace writes most (every Spark Connect call's, the operation, stage, job and
//   application spans: compact_attribute_dictionary.h's StoredWholeNames) as one code byte each
//   (SQLite schema 16, PostgreSQL trace schema 11), as HPACK's static table keeps a header it knows;
// - any other call's name with its RPC prefix, "spark.connect.SparkConnectService/" (34 bytes;
//   StoredNamePrefix), as the one byte kStoredNamePrefixCode and the method (SQLite 15, PostgreSQL 10);
// - a name that itself starts with a byte 0x01-0x1f (codes, assigned or not) behind
//   kStoredNameEscapeCode, so that every name reads back exact and a code added later needs no
//   migration;
// - any other name as it is.
// SQL that looks for a name matches every form a row may hold (span_table_sql.h, StoredNameSql).
// APPEND-ONLY, as the attribute dictionaries: stored rows hold these bytes.
inline constexpr char kStoredNamePrefixCode = '\x01';
inline constexpr char kStoredNameEscapeCode = '\x02';
// Whether a stored name's first byte is a code (or reserved for one) rather than the name's own.
inline constexpr bool IsStoredNameCode(char first) { return first >= '\x01' && first <= '\x1f'; }
// The bytes a row keeps for `name`: `name` itself, a name coded whole as its code byte (in static
// storage), or its prefix-coded or escaped form written into `scratch`.
std::string_view StoredName(std::string_view name, std::string& scratch);
// The name a row's bytes keep (StoredName undone).
std::string NameOfStored(std::string_view stored);

// 32 hex digits back into a trace id (any value, zero included, unlike ParseTraceId).
bool ParseTraceHex(std::string_view hex, TraceId& out);

// Unix nanoseconds are unsigned in the span model and signed in SQL; exact until 2262.
inline std::int64_t ToSql(std::uint64_t value) { return static_cast<std::int64_t>(value); }
inline std::uint64_t FromSql(std::int64_t value) { return static_cast<std::uint64_t>(value); }

}  // namespace sparktrace::tracing::store
