#pragma once
// The real Spark event logs of /work/shared/data (see its README.md and README-rapids.md), for
// the listener event tests.
//
// Where: $SPARKTRACE_DATA_DIR when set, else shared/data next to the source tree (found from this
// header's own path, so no build setting is needed). Tests GTEST_SKIP, saying so, when it is absent.
//
// Compressed logs are decoded with the zstd and gzip programs: reading files and codecs is not
// what these tests are about (listener/eventlog does that), and the programs decode independently.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace sparktrace::listener::events::test_data {

inline std::optional<std::filesystem::path> FindDataDir() {
  namespace fs = std::filesystem;
  fs::path directory;
  if (const char* configured = std::getenv("SPARKTRACE_DATA_DIR");
      configured != nullptr && *configured != '\0') {
    directory = configured;
  } else {
    // This header is <source>/tests/unit/listener/events/listener_event_test_data.h; the data
    // <source>/../shared/data.
    directory = fs::path(__FILE__).parent_path() / ".." / ".." / ".." / ".." / ".." / "shared" / "data";
  }
  std::error_code error;
  if (!fs::is_directory(directory / "spark-events", error)) return std::nullopt;
  return directory.lexically_normal();
}

inline std::string DataDirMissingMessage() {
  return "Spark event-log test data not found: set SPARKTRACE_DATA_DIR to the shared/data directory "
         "(with spark-events/, spark-events-broken/, spark-events-problems/)";
}

// The decoded bytes of one log file, or nullopt with `why` set.
inline std::optional<std::string> ReadLogFile(const std::filesystem::path& path, std::string& why) {
  const std::string extension = path.extension().string();
  if (extension != ".zstd" && extension != ".gz") {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      why = "cannot open " + path.string();
      return std::nullopt;
    }
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  const std::string program = extension == ".zstd" ? "zstd -dcq" : "gzip -dc";
  if (path.string().find('\'') != std::string::npos) {
    why = "unexpected quote in " + path.string();
    return std::nullopt;
  }
  const std::string command = program + " -- '" + path.string() + "' 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    why = "cannot run " + command;
    return std::nullopt;
  }
  std::string content;
  char chunk[1 << 16];
  std::size_t read = 0;
  while ((read = std::fread(chunk, 1, sizeof chunk, pipe)) > 0) content.append(chunk, read);
  const int status = pclose(pipe);
  if (status != 0) {
    why = command + " failed (status " + std::to_string(status) + "; is the " +
          program.substr(0, program.find(' ')) + " program installed?)";
    return std::nullopt;
  }
  return content;
}

// The lines of a log (without '\n'); a final empty piece after the last '\n' is not a line.
inline std::vector<std::string_view> SplitLines(std::string_view content) {
  std::vector<std::string_view> lines;
  while (!content.empty()) {
    const std::size_t newline = content.find('\n');
    lines.push_back(content.substr(0, newline));
    if (newline == std::string_view::npos) break;
    content.remove_prefix(newline + 1);
  }
  return lines;
}

}  // namespace sparktrace::listener::events::test_data
