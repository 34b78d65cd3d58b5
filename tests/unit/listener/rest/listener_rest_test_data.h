#pragma once
// The History Server REST expectation files of shared/data/rest-api (see shared/data/README.md),
// found like the event logs (listener_event_test_data.h). Tests GTEST_SKIP, saying so, when absent.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "listener/events/spark_event.h"
#include "listener/rest/rest_event.h"
#include "tests/unit/listener/events/listener_event_test_data.h"

namespace sparktrace::listener::rest::test {

inline std::optional<std::filesystem::path> FindRestApiDir() {
  auto data = listener::events::test_data::FindDataDir();
  if (!data) return std::nullopt;
  std::error_code error;
  if (!std::filesystem::is_directory(*data / "rest-api", error)) return std::nullopt;
  return *data / "rest-api";
}

inline std::string RestApiDirMissingMessage() {
  return "REST API sample data not found: set SPARKTRACE_DATA_DIR to the shared/data directory (with "
         "rest-api/)";
}

// The whole file, or "" when it cannot be read (the tests then fail on their expectations).
inline std::string ReadRestSample(const std::filesystem::path& directory, const std::string& name) {
  std::ifstream in(directory / name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// `text` with the first occurrence of `from` replaced; "" when `from` is not there, so a sample that
// changed shape fails the test loudly instead of testing nothing.
inline std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) return "";
  return text.replace(at, from.size(), to);
}

// The Spark event names of `events`, in order.
inline std::vector<std::string> Names(const std::vector<RestEvent>& events) {
  std::vector<std::string> names;
  names.reserve(events.size());
  for (const RestEvent& event : events) names.emplace_back(listener::events::SparkEventName(event.event));
  return names;
}

}  // namespace sparktrace::listener::rest::test
