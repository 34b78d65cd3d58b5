#pragma once
// Process-wide logging set-up: spdlog to stderr, as human text or one JSON object per line.
// Two loggers: the default one for operational messages and "access" for one line per RPC.

#include <memory>
#include <string>
#include <string_view>

#include "common/json_escape.h"

#include <spdlog/spdlog.h>

#include "common/result.h"

namespace sparktrace {

enum class LogFormat { kText, kJson };

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view text);
Result<LogFormat> ParseLogFormat(std::string_view text);

// Installs the default logger and the access logger. Call once, before any threads log.
void ConfigureLogging(spdlog::level::level_enum level, LogFormat format);

LogFormat CurrentLogFormat();

// The access logger; its messages are pre-rendered LogFields (see below).
std::shared_ptr<spdlog::logger> AccessLogger();

// Structured key/value fields rendered for the current format: `k=v k="v w"` in text,
// `"k":"v","k":1` members in JSON (the JSON formatter wraps them into the line's object).
class LogFields {
 public:
  explicit LogFields(LogFormat format) : format_(format) {}
  LogFields& Add(std::string_view key, std::string_view value);
  LogFields& Add(std::string_view key, std::int64_t value);
  LogFields& Add(std::string_view key, double value);
  const std::string& str() const { return text_; }

 private:
  void AppendKey(std::string_view key);
  LogFormat format_;
  std::string text_;
};


}  // namespace sparktrace
