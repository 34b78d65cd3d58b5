#include "tracing/store/sqlite/sqlite_attribute_function.h"

#include <spdlog/fmt/fmt.h>
#include <sqlite3.h>

#include <cmath>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tracing/attribute_json.h"
#include "tracing/store/span_rows/attribute_json_reader.h"
#include "tracing/store/span_rows/compact_attributes.h"
#include "tracing/store/sqlite/client/sqlite_connection.h"

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
    const std::optional<AttributeValue> value =
        type == SQLITE_BLOB ? FindCompactAttribute(row, key) : FindJsonAttribute(row, key);
    if (value) {
      SetResult(context, *value);
    } else {
      sqlite3_result_null(context);
    }
  } catch (const std::exception&) {
    sqlite3_result_error_nomem(context);  // only std::bad_alloc can get here
  }
}

int HexDigitValue(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  if (digit >= 'A' && digit <= 'F') return digit - 'A' + 10;
  return -1;
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
