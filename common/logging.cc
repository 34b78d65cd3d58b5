#include "common/logging.h"

#include <array>
#include <chrono>
#include <cstdio>

#include <spdlog/fmt/fmt.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace sparktrace {
namespace {

LogFormat g_format = LogFormat::kText;

// One JSON object per line: {"ts":"…","level":"info","logger":"…","msg":"…"}. For the access
// logger the message already is a list of JSON members, which become top-level fields.
class JsonFormatter final : public spdlog::formatter {
 public:
  explicit JsonFormatter(bool message_is_fields) : message_is_fields_(message_is_fields) {}

  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    std::string line;
    line.reserve(msg.payload.size() + 96);
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(since_epoch - seconds);
    const std::time_t t = seconds.count();
    std::tm utc{};
    gmtime_r(&t, &utc);
    std::array<char, 64> ts{};
    std::snprintf(ts.data(), ts.size(), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<long>(micros.count()));
    line += R"({"ts":")";
    line += ts.data();
    line += R"(","level":")";
    const auto level = spdlog::level::to_string_view(msg.level);
    line.append(level.data(), level.size());
    line += R"(","logger":")";
    AppendJsonEscaped(line, std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    line += '"';
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    if (message_is_fields_) {
      if (!payload.empty()) line += ',';
      line += payload;
    } else {
      line += R"(,"msg":")";
      AppendJsonEscaped(line, payload);
      line += '"';
    }
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>(message_is_fields_);
  }

 private:
  bool message_is_fields_;
};

std::shared_ptr<spdlog::logger> MakeLogger(const std::string& name, spdlog::sink_ptr sink,
                                           spdlog::level::level_enum level, LogFormat format,
                                           bool message_is_fields) {
  auto logger = std::make_shared<spdlog::logger>(name, std::move(sink));
  if (format == LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>(message_is_fields));
  } else {
    logger->set_formatter(std::make_unique<spdlog::pattern_formatter>("%Y-%m-%dT%H:%M:%S.%fZ %l %n: %v",
                                                                      spdlog::pattern_time_type::utc));
  }
  logger->set_level(level);
  // Warnings and errors must not sit in a buffer when the process is killed.
  logger->flush_on(spdlog::level::warn);
  return logger;
}

}  // namespace

Result<spdlog::level::level_enum> ParseLogLevel(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, spdlog::level::level_enum>, 6> kLevels = {{
      {"trace", spdlog::level::trace},
      {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},
      {"error", spdlog::level::err},
      {"off", spdlog::level::off},
  }};
  for (const auto& [name, level] : kLevels) {
    if (text == name) return level;
  }
  return InvalidArgument("'" + std::string(text) + "' is not a log level (trace, debug, info, warn, error, off)");
}

Result<LogFormat> ParseLogFormat(std::string_view text) {
  if (text == "text") return LogFormat::kText;
  if (text == "json") return LogFormat::kJson;
  return InvalidArgument("'" + std::string(text) + "' is not a log format (text or json)");
}

void ConfigureLogging(spdlog::level::level_enum level, LogFormat format) {
  g_format = format;
  // One sink each: spdlog keeps the formatter in the sink, so a shared sink would format the main
  // logger's messages as the access logger's ready-made JSON members (unquoted). Both write whole
  // lines to stderr with one fwrite, which stdio serialises.
  auto main_logger = MakeLogger("sparktrace", std::make_shared<spdlog::sinks::stderr_sink_mt>(), level, format,
                                /*message_is_fields=*/false);
  auto access_logger = MakeLogger("access", std::make_shared<spdlog::sinks::stderr_sink_mt>(), level, format,
                                  /*message_is_fields=*/true);
  // Access lines are many and small; stderr is unbuffered at the C level, so there is no need
  // to flush on every line beyond what the sink does.
  spdlog::drop("access");
  spdlog::register_logger(access_logger);
  spdlog::set_default_logger(main_logger);
}

LogFormat CurrentLogFormat() { return g_format; }

std::shared_ptr<spdlog::logger> AccessLogger() {
  auto logger = spdlog::get("access");
  return logger ? logger : spdlog::default_logger();
}


void LogFields::AppendKey(std::string_view key) {
  if (!text_.empty()) text_ += format_ == LogFormat::kJson ? "," : " ";
  if (format_ == LogFormat::kJson) {
    text_ += '"';
    AppendJsonEscaped(text_, key);
    text_ += "\":";
  } else {
    text_ += key;
    text_ += '=';
  }
}

LogFields& LogFields::Add(std::string_view key, std::string_view value) {
  AppendKey(key);
  const bool needs_quotes =
      format_ == LogFormat::kJson || value.empty() || value.find_first_of(" \"=\t\n") != std::string_view::npos;
  if (needs_quotes) {
    text_ += '"';
    AppendJsonEscaped(text_, value);
    text_ += '"';
  } else {
    text_ += value;
  }
  return *this;
}

LogFields& LogFields::Add(std::string_view key, std::int64_t value) {
  AppendKey(key);
  text_ += std::to_string(value);
  return *this;
}

LogFields& LogFields::Add(std::string_view key, double value) {
  AppendKey(key);
  text_ += fmt::format("{:.3f}", value);
  return *this;
}

}  // namespace sparktrace
