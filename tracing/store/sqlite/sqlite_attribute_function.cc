#include "tracing/store/sqlite/sqlite_attribute_function.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/hex_digit.h"
#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/attribute_json_reader.h"
#include "tracing/store/span_rows/shared/shared_attributes.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"
#include "tracing/store/sqlite/rows/sqlite_attribute_sets.h"

namespace sparktrace::tracing::store {
namespace {

std::string_view ArgumentBytes(sqlite3_value* value, bool blob) {
  const void* data = blob ? sqlite3_value_blob(value) : static_cast<const void*>(sqlite3_value_text(value));
  const int size = sqlite3_value_bytes(value);
  if (data == nullptr) return {};
  return {static_cast<const char*>(data), static_cast<std::size_t>(size)};
}

// A JSON row (schema version 5 and before): decoded whole, as the rows are few and only age out.
std::optional<AttributeValue> FindJsonAttribute(std::string_view text, std::string_view key) {
  std::vector<Attribute> attributes;
  if (!ReadAttributesJson(text, attributes)) return std::nullopt;
  for (Attribute& attribute : attributes) {
    if (attribute.key == key) return std::move(attribute.value);
  }
  return std::nullopt;
}

// The sets of rows in the shared form, read from the function's own connection: only a shareable key
// of such a row needs its set (the queries of this store ask for none), so each is read when asked.
class ConnectionSetSource final : public AttributeSetSource {
 public:
  explicit ConnectionSetSource(sqlite3* db) : db_(db) {}

  Result<std::string> AttributeSetBytes(std::uint64_t set_id) override {
    sqlite3_stmt* raw = nullptr;
    if (const int rc = sqlite3_prepare_v2(db_, kAttributeSetBytesSql.data(),
                                          static_cast<int>(kAttributeSetBytesSql.size()), &raw, nullptr);
        rc != SQLITE_OK) {
      return SqliteError(db_, rc, "read an attribute set");
    }
    const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> stmt(raw, &sqlite3_finalize);
    sqlite3_bind_int64(stmt.get(), 1, static_cast<sqlite3_int64>(set_id));
    const int rc = sqlite3_step(stmt.get());
    if (rc == SQLITE_DONE) return AttributeSetMissing(set_id);
    if (rc != SQLITE_ROW) return SqliteError(db_, rc, "read an attribute set");
    return std::string(ArgumentBytes(sqlite3_column_value(stmt.get(), 0), /*blob=*/true));
  }

 private:
  sqlite3* db_;
};

void SetResult(sqlite3_context* context, const AttributeValue& value) {
  std::visit(
      [context](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          sqlite3_result_text64(context, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          sqlite3_result_int64(context, v);
        } else if constexpr (std::is_same_v<V, double>) {
          if (std::isnan(v)) {
            sqlite3_result_null(context);  // JSON null, as ->> reads it
          } else {
            sqlite3_result_double(context, v);
          }
        } else if constexpr (std::is_same_v<V, bool>) {
          sqlite3_result_int(context, v ? 1 : 0);
        } else {
          const std::string text = DumpJson(AttributeValueToJson(v));
          sqlite3_result_text64(context, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        }
      },
      value);
}

void AttributeFunction(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 2) {
    sqlite3_result_error(context, "sparktrace_attribute(attributes, key) takes two arguments", -1);
    return;
  }
  const int type = sqlite3_value_type(argv[0]);
  if ((type != SQLITE_BLOB && type != SQLITE_TEXT) || sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
    sqlite3_result_null(context);
    return;
  }
  try {
    const std::string_view key = ArgumentBytes(argv[1], /*blob=*/false);
    const std::string_view row = ArgumentBytes(argv[0], type == SQLITE_BLOB);
    std::optional<AttributeValue> value;
    if (type == SQLITE_BLOB) {
      ConnectionSetSource sets(sqlite3_context_db_handle(context));
      auto found = FindCompactOrSharedAttribute(row, key, &sets);
      if (!found.ok()) {
        sqlite3_result_error(context, found.error().message.c_str(), -1);
        return;
      }
      value = std::move(found).value();
    } else {
      value = FindJsonAttribute(row, key);
    }
    if (value) {
      SetResult(context, *value);
    } else {
      sqlite3_result_null(context);
    }
  } catch (const std::exception&) {
    sqlite3_result_error_nomem(context);  // only std::bad_alloc can get here
  }
}

// sparktrace_unhex(text): the bytes an even number of hex digits spell, as a BLOB; a BLOB unchanged (an
// id already converted); NULL for NULL or anything else. SQLite 3.41 has unhex(); 3.40 does not.
void UnhexFunction(sqlite3_context* context, int argc, sqlite3_value** argv) {
  if (argc != 1) {
    sqlite3_result_error(context, "sparktrace_unhex(text) takes one argument", -1);
    return;
  }
  const int type = sqlite3_value_type(argv[0]);
  if (type == SQLITE_BLOB) {
    sqlite3_result_value(context, argv[0]);
    return;
  }
  if (type != SQLITE_TEXT) {
    sqlite3_result_null(context);
    return;
  }
  const std::string_view hex = ArgumentBytes(argv[0], /*blob=*/false);
  if (hex.size() % 2 != 0) {
    sqlite3_result_null(context);
    return;
  }
  try {
    std::string bytes(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const int high = HexDigitValue(hex[2 * i]);
      const int low = HexDigitValue(hex[2 * i + 1]);
      if (high < 0 || low < 0) {
        sqlite3_result_null(context);
        return;
      }
      bytes[i] = static_cast<char>(high * 16 + low);
    }
    sqlite3_result_blob64(context, bytes.data(), bytes.size(), SQLITE_TRANSIENT);
  } catch (const std::exception&) {
    sqlite3_result_error_nomem(context);  // only std::bad_alloc can get here
  }
}

}  // namespace

Result<void> RegisterAttributeFunction(SqliteConnection& db) {
  // Deterministic: SQLite may use it in indexes and constant-fold it; innocuous: no side effects.
  const int rc = sqlite3_create_function_v2(db.handle(), kSqliteAttributeFunction, 2,
                                            SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                            &AttributeFunction, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    return Error{ErrorCode::kInternal,
                 fmt::format("register {}(): {}", kSqliteAttributeFunction, sqlite3_errstr(rc))};
  }
  const int unhex_rc = sqlite3_create_function_v2(db.handle(), kSqliteUnhexFunction, 1,
                                                  SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
                                                  nullptr, &UnhexFunction, nullptr, nullptr, nullptr);
  if (unhex_rc != SQLITE_OK) {
    return Error{ErrorCode::kInternal,
                 fmt::format("register {}(): {}", kSqliteUnhexFunction, sqlite3_errstr(unhex_rc))};
  }
  return {};
}

}  // namespace sparktrace::tracing::store
