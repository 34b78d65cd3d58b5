#include "sim/eventlog/json_line.h"

namespace sparktrace::sim::eventlog {

JsonLine& JsonLine::StringMap(std::string_view key,
                              const std::vector<std::pair<std::string, std::string>>& entries) {
  Key(key).BeginObject();
  for (const auto& [name, value] : entries) Field(name, value);
  return EndObject();
}

}  // namespace sparktrace::sim::eventlog
