// The simulated event log on disk: Spark's file names, plain and zstd, single and rolling, read
// back with listener/eventlog's scanner line for line; and the same flags give the same bytes.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "listener/eventlog/event_log_scanner.h"
#include "sim/eventlog/event_log_writer.h"
#include "tests/unit/listener/eventlog/eventlog_test_support.h"
#include "tests/unit/sim/eventlog/sim_eventlog_test_support.h"

namespace sparktrace::sim::eventlog {
namespace {

using sparktrace::listener::eventlog::EventLogScanner;
using sparktrace::listener::eventlog::testing::OptionsFor;
using sparktrace::listener::eventlog::testing::ReadFileBytes;
using sparktrace::listener::eventlog::testing::RecordingSink;
using sparktrace::listener::eventlog::testing::TempDir;
using testing::LogOptions;

std::string WriteLog(const GeneratedLog& log, const std::filesystem::path& directory, LogCodec codec,
                     std::uint64_t rolling_bytes, const std::string& app_id = "spark-test-application") {
  WriterOptions options;
  options.directory = directory.string();
  options.app_id = app_id;
  options.codec = codec;
  options.rolling_max_bytes = rolling_bytes;
  auto writer = EventLogWriter::Open(options);
  EXPECT_TRUE(writer.ok()) << (writer.ok() ? "" : writer.error().message);
  if (!writer.ok()) return "";
  for (const LogLine& line : log.lines) EXPECT_TRUE((*writer)->Write(line.text, line.flush).ok());
  EXPECT_TRUE((*writer)->Close().ok());
  return (*writer)->final_path();
}

// Every line the scanner delivers for the one log in `directory`, and whether it saw it complete.
std::vector<std::string> ScanAll(const std::filesystem::path& directory, int* completions) {
  auto scanner = EventLogScanner::Create(OptionsFor({directory.string()}));
  EXPECT_TRUE(scanner.ok());
  RecordingSink sink;
  for (int polls = 0; polls < 100 && (*scanner)->Poll(sink); ++polls) {
  }
  (*scanner)->Poll(sink);
  if (sink.Identities().size() != 1) {
    ADD_FAILURE() << "expected one log in " << directory << ", found " << sink.Identities().size();
    return {};
  }
  const std::string id = sink.Identities().begin()->first;
  *completions = sink.Completions(id);
  return sink.Texts(id);
}

std::vector<std::string> Texts(const GeneratedLog& log) {
  std::vector<std::string> texts;
  for (const LogLine& line : log.lines) texts.push_back(line.text);
  return texts;
}

TEST(SimEventLogWriter, SameFlagsSameBytes) {
  const GeneratedLog first = GenerateLog(LogOptions("skew,failing-tasks", 0.7, 42));
  const GeneratedLog second = GenerateLog(LogOptions("skew,failing-tasks", 0.7, 42));
  EXPECT_EQ(Texts(first), Texts(second));
  TempDir one;
  TempDir two;
  const std::string path_one = WriteLog(first, one.path(), LogCodec::kZstd, 0);
  const std::string path_two = WriteLog(second, two.path(), LogCodec::kZstd, 0);
  EXPECT_EQ(ReadFileBytes(path_one), ReadFileBytes(path_two));
  // Another seed: other ids and other jitter.
  const GeneratedLog other = GenerateLog(LogOptions("skew,failing-tasks", 0.7, 43));
  EXPECT_NE(Texts(first), Texts(other));
}

TEST(SimEventLogWriter, EveryLayoutReadsBackAsTheLinesWritten) {
  const GeneratedLog log = GenerateLog(LogOptions("spill", 0.5, 5, 8));
  const std::vector<std::string> expected = Texts(log);
  struct Layout {
    LogCodec codec;
    std::uint64_t rolling_bytes;
    std::string final_name;
  };
  for (const Layout& layout : {Layout{LogCodec::kPlain, 0, "spark-test-application"},
                               Layout{LogCodec::kZstd, 0, "spark-test-application.zstd"},
                               Layout{LogCodec::kPlain, 256 << 10, "eventlog_v2_spark-test-application"},
                               Layout{LogCodec::kZstd, 256 << 10, "eventlog_v2_spark-test-application"}}) {
    SCOPED_TRACE(layout.final_name + (layout.codec == LogCodec::kZstd ? " zstd" : " plain"));
    TempDir directory;
    const std::string path = WriteLog(log, directory.path(), layout.codec, layout.rolling_bytes);
    EXPECT_EQ(path, (directory.path() / layout.final_name).string());
    int completions = 0;
    EXPECT_EQ(ScanAll(directory.path(), &completions), expected);
    EXPECT_EQ(completions, 1);
    if (layout.rolling_bytes > 0) {
      const std::string suffix = layout.codec == LogCodec::kZstd ? ".zstd" : "";
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(path) / "appstatus_spark-test-application"));
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(path) /
                                          ("events_1_spark-test-application" + suffix)));
      EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(path) /
                                          ("events_2_spark-test-application" + suffix)));
      // Rolled before a line would take a file past the limit (uncompressed).
      if (layout.codec == LogCodec::kPlain) {
        for (const auto& entry : std::filesystem::directory_iterator(path)) {
          EXPECT_LE(entry.file_size(), layout.rolling_bytes) << entry.path();
        }
      }
    }
  }
}

TEST(SimEventLogWriter, AReaderFollowsTheLogWhileItIsWritten) {
  const GeneratedLog log = GenerateLog(LogOptions("clean", 1.0, 5, 2));
  for (LogCodec codec : {LogCodec::kPlain, LogCodec::kZstd}) {
    TempDir directory;
    WriterOptions options;
    options.directory = directory.path().string();
    options.app_id = "spark-Live.App";  // sanitised: '.' → '_', lower case
    options.codec = codec;
    auto writer = EventLogWriter::Open(options);
    ASSERT_TRUE(writer.ok());
    const std::string suffix = codec == LogCodec::kZstd ? ".zstd" : "";
    EXPECT_EQ((*writer)->current_file(),
              (directory.path() / ("spark-live_app" + suffix + ".inprogress")).string());
    auto scanner = EventLogScanner::Create(OptionsFor({directory.path().string()}));
    ASSERT_TRUE(scanner.ok());
    RecordingSink sink;
    // Up to and including the last flushing line of the first half: what a tailer must see.
    const std::size_t half = log.lines.size() / 2;
    std::size_t visible = 0;
    for (std::size_t i = 0; i < half; ++i) {
      ASSERT_TRUE((*writer)->Write(log.lines[i].text, log.lines[i].flush).ok());
      if (log.lines[i].flush) visible = i + 1;
    }
    while ((*scanner)->Poll(sink)) {
    }
    ASSERT_EQ(sink.Identities().size(), 1u);
    const std::string id = sink.Identities().begin()->first;
    EXPECT_EQ(sink.Texts(id).size(), visible);
    EXPECT_EQ(sink.Completions(id), 0);
    for (std::size_t i = half; i < log.lines.size(); ++i) {
      ASSERT_TRUE((*writer)->Write(log.lines[i].text, log.lines[i].flush).ok());
    }
    ASSERT_TRUE((*writer)->Close().ok());
    EXPECT_EQ((*writer)->final_path(), (directory.path() / ("spark-live_app" + suffix)).string());
    while ((*scanner)->Poll(sink)) {
    }
    (*scanner)->Poll(sink);
    EXPECT_EQ(sink.Texts(id), Texts(log));
    EXPECT_EQ(sink.Completions(id), 1);
  }
}

TEST(SimEventLogWriter, SanitisesTheApplicationIdLikeSpark) {
  EXPECT_EQ(SanitizedLogBase("app-20250101 12:00/x.y$z{a}'b\"C"), "app-20250101-12-00-x_y_z_a__b_c");
  EXPECT_FALSE(ParseLogCodec("lz4").ok());
  EXPECT_EQ(*ParseLogCodec("zstd"), LogCodec::kZstd);
}

}  // namespace
}  // namespace sparktrace::sim::eventlog
