#pragma once
// Shared helpers of the tests/unit/listener/eventlog/eventlog_*_test.cc files: where the shared Spark test
// data lives, temporary directories, a sink that records what it gets, and writers of the three codec stream
// formats (so that tests can cut frames and blocks wherever they like).

#include <lz4.h>
#include <snappy.h>
#include <stdlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "listener/eventlog/event_log_scanner.h"
#include "listener/eventlog/event_log_sink.h"
#include "listener/eventlog/xxhash32.h"

namespace sparktrace::listener::eventlog::testing {

// The shared data directory (spark-events/, spark-events-derived/, ...): $SPARKTRACE_DATA_DIR if set,
// else shared/data next to the source tree (this file is tests/unit/listener/eventlog/ of /work/main, the
// data /work/shared/data). Empty when it is not there; tests that need it then skip and say so.
inline std::filesystem::path DataDir() {
  std::filesystem::path directory;
  if (const char* from_environment = std::getenv("SPARKTRACE_DATA_DIR");
      from_environment && *from_environment) {
    directory = from_environment;
  } else {
    directory =
        std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / ".." / ".." / "shared" / "data";
  }
  std::error_code error;
  if (!std::filesystem::is_directory(directory / "spark-events-derived", error)) return {};
  return directory.lexically_normal();
}

inline constexpr const char* kNoDataMessage =
    "shared Spark event-log data not found: set SPARKTRACE_DATA_DIR to the directory holding spark-events/ "
    "and "
    "spark-events-derived/ (default: <source>/../shared/data)";

inline std::string ReadFileBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

inline void WriteFileBytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void AppendFileBytes(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot append to " + path.string());
}

// Lines as a reader of a complete file sees them: split at '\n', a last line without one included.
inline std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    if (newline == std::string_view::npos) {
      lines.emplace_back(text);
      break;
    }
    lines.emplace_back(text.substr(0, newline));
    text.remove_prefix(newline + 1);
  }
  return lines;
}

inline ScannerOptions OptionsFor(std::vector<std::string> directories) {
  ScannerOptions options;
  options.directories = std::move(directories);
  return options;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/sparktrace-eventlog-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct RecordedLine {
  std::string text;
  std::string file_path;
  std::uint64_t file_index;
  std::uint64_t decoded_offset;
  std::uint64_t line_number;
  std::uint64_t generation;
};

class RecordingSink : public EventLogSink {
 public:
  LineVerdict OnLine(const LogIdentity& log, std::string_view line, const LinePosition& position) override {
    lines_[log.id].push_back(RecordedLine{std::string(line), std::string(position.file_path),
                                          position.file_index, position.decoded_offset, position.line_number,
                                          position.generation});
    identities_[log.id] = log;
    return corrupt_when_starts_with_.empty() || !line.starts_with(corrupt_when_starts_with_)
               ? LineVerdict::kAccepted
               : LineVerdict::kCorrupt;
  }
  void OnLogRestarted(const LogIdentity& log, std::uint64_t generation, std::string_view reason) override {
    restarts_[log.id].push_back(std::to_string(generation) + ": " + std::string(reason));
  }
  void OnLogCompleted(const LogIdentity& log) override { ++completions_[log.id]; }

  // Lines starting with `prefix` are answered kCorrupt (as a JSON parser would for bad JSON).
  void AnswerCorruptFor(std::string prefix) { corrupt_when_starts_with_ = std::move(prefix); }

  std::vector<std::string> Texts(const std::string& id) const {
    std::vector<std::string> texts;
    if (auto found = lines_.find(id); found != lines_.end()) {
      for (const RecordedLine& line : found->second) texts.push_back(line.text);
    }
    return texts;
  }
  const std::vector<RecordedLine>& Lines(const std::string& id) { return lines_[id]; }
  std::vector<std::string> Restarts(const std::string& id) { return restarts_[id]; }
  int Completions(const std::string& id) { return completions_[id]; }
  const std::map<std::string, LogIdentity>& Identities() const { return identities_; }
  void Clear(const std::string& id) { lines_.erase(id); }

 private:
  std::map<std::string, std::vector<RecordedLine>> lines_;
  std::map<std::string, std::vector<std::string>> restarts_;
  std::map<std::string, int> completions_;
  std::map<std::string, LogIdentity> identities_;
  std::string corrupt_when_starts_with_;
};

// Polls until the scanner reports nothing more to read for now.
inline void PollUntilIdle(EventLogScanner& scanner, RecordingSink& sink) {
  while (scanner.Poll(sink)) {
  }
}

// --- stream writers -------------------------------------------------------------------------------

inline std::string ZstdFrame(std::string_view data, int level = 1) {
  std::string frame(ZSTD_compressBound(data.size()), '\0');
  const std::size_t size = ZSTD_compress(frame.data(), frame.size(), data.data(), data.size(), level);
  if (ZSTD_isError(size)) throw std::runtime_error(ZSTD_getErrorName(size));
  frame.resize(size);
  return frame;
}

inline void AppendLittleEndian32(std::string& out, std::uint32_t value) {
  for (int shift = 0; shift < 32; shift += 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

inline void AppendBigEndian32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((value >> shift) & 0xFF));
}

// lz4-java LZ4BlockOutputStream, 32 KiB blocks (token level 5). `stored` writes method 0x10 blocks
// (what lz4-java does when compression does not pay); `end_mark` the final empty block of close().
inline std::string Lz4JavaStream(std::string_view data, bool stored = false, bool end_mark = true,
                                 std::size_t block_size = 32 * 1024) {
  constexpr unsigned kLevel = 5;  // 1 << (10 + 5) = 32 KiB
  std::string out;
  for (std::size_t start = 0; start < data.size(); start += block_size) {
    const std::string_view block = data.substr(start, block_size);
    std::string payload;
    unsigned method = 0x10;
    if (!stored) {
      payload.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(block.size()))));
      const int size = LZ4_compress_default(block.data(), payload.data(), static_cast<int>(block.size()),
                                            static_cast<int>(payload.size()));
      payload.resize(static_cast<std::size_t>(size));
      method = 0x20;
    } else {
      payload = std::string(block);
    }
    out += "LZ4Block";
    out.push_back(static_cast<char>(method | kLevel));
    AppendLittleEndian32(out, static_cast<std::uint32_t>(payload.size()));
    AppendLittleEndian32(out, static_cast<std::uint32_t>(block.size()));
    AppendLittleEndian32(out, XxHash32(block, 0x9747b28c) & 0x0FFFFFFF);
    out += payload;
  }
  if (end_mark) {
    out += "LZ4Block";
    out.push_back(static_cast<char>(0x10 | kLevel));
    out.append(12, '\0');
  }
  return out;
}

// snappy-java SnappyOutputStream: header, then one chunk per `chunk_size` bytes.
inline std::string SnappyJavaStream(std::string_view data, std::size_t chunk_size = 32 * 1024,
                                    bool header = true) {
  std::string out;
  if (header) {
    out.append("\x82SNAPPY\0", 8);
    AppendBigEndian32(out, 1);
    AppendBigEndian32(out, 1);
  }
  for (std::size_t start = 0; start < data.size(); start += chunk_size) {
    std::string compressed;
    snappy::Compress(data.data() + start, std::min(chunk_size, data.size() - start), &compressed);
    AppendBigEndian32(out, static_cast<std::uint32_t>(compressed.size()));
    out += compressed;
  }
  return out;
}

// Test event lines: valid-looking JSON of varying length, so lines straddle frames and reads.
inline std::vector<std::string> MakeEventLines(int count, int seed = 0) {
  std::vector<std::string> lines;
  for (int i = 0; i < count; ++i) {
    const int padding = (i * 37 + seed * 11) % 300;
    lines.push_back("{\"Event\":\"SparkListenerTaskEnd\",\"Task ID\":" + std::to_string(i) + ",\"Pad\":\"" +
                    std::string(static_cast<std::size_t>(padding), static_cast<char>('a' + i % 26)) + "\"}");
  }
  return lines;
}

inline std::string JoinLines(const std::vector<std::string>& lines, std::size_t begin = 0,
                             std::size_t end = static_cast<std::size_t>(-1)) {
  std::string joined;
  for (std::size_t i = begin; i < std::min(end, lines.size()); ++i) joined += lines[i] + "\n";
  return joined;
}

// Chunk sizes that land everywhere: inside headers, lengths, payloads and lines.
inline std::vector<std::size_t> AwkwardChunkSizes() {
  return {1, 2, 3, 5, 7, 11, 13, 17, 21, 29, 64, 127, 509, 4093};
}

}  // namespace sparktrace::listener::eventlog::testing
