// Logs that grow while they are followed: bytes are appended in small pieces that cut zstd frames,
// lz4/snappy blocks, their headers and lines at awkward points, and the scanner is polled after every
// piece. Every line must arrive exactly once, in order, and nothing may be reported as an error.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "listener/eventlog/event_log_scanner.h"
#include "tests/unit/listener/eventlog/eventlog_test_support.h"

namespace sparktrace::listener::eventlog {
namespace {

using testing::AppendFileBytes;
using testing::AwkwardChunkSizes;
using testing::DataDir;
using testing::JoinLines;
using testing::kNoDataMessage;
using testing::Lz4JavaStream;
using testing::MakeEventLines;
using testing::OptionsFor;
using testing::PollUntilIdle;
using testing::ReadFileBytes;
using testing::RecordingSink;
using testing::SnappyJavaStream;
using testing::SplitLines;
using testing::TempDir;
using testing::WriteFileBytes;
using testing::ZstdFrame;

std::unique_ptr<EventLogScanner> MakeTailScanner(const std::filesystem::path& directory) {
  auto scanner = EventLogScanner::Create(OptionsFor({directory.string()}));
  EXPECT_TRUE(scanner.ok());
  return std::move(scanner).value();
}

// Appends `stream` to `path` piece by piece, polling after each piece; checks that what has arrived
// is always a prefix of `expected` (no line twice, none out of order).
void GrowAndPoll(const std::filesystem::path& path, std::string_view stream, EventLogScanner& scanner,
                 RecordingSink& sink, const std::string& id, const std::vector<std::string>& expected) {
  const std::vector<std::size_t> sizes = AwkwardChunkSizes();
  std::size_t written = 0;
  for (std::size_t piece = 0; written < stream.size(); ++piece) {
    const std::size_t size = std::min(sizes[piece % sizes.size()], stream.size() - written);
    AppendFileBytes(path, stream.substr(written, size));
    written += size;
    PollUntilIdle(scanner, sink);
    const std::vector<std::string> got = sink.Texts(id);
    ASSERT_LE(got.size(), expected.size()) << "after " << written << " bytes";
    if (!got.empty()) {
      ASSERT_EQ(got.back(), expected[got.size() - 1]) << "after " << written << " bytes";
    }
  }
}

void ExpectNothingWrong(const LogStatus& status) {
  EXPECT_EQ(status.counters.decode_errors, 0u) << status.problem;
  EXPECT_EQ(status.counters.corrupt_lines + status.counters.oversized_lines + status.counters.truncated_lines,
            0u);
  EXPECT_EQ(status.counters.restarts + status.counters.read_errors + status.counters.missing_files, 0u);
}

void ExpectLineNumbersCount(RecordingSink& sink, const std::string& id) {
  const auto& lines = sink.Lines(id);
  for (std::size_t i = 0; i < lines.size(); ++i) ASSERT_EQ(lines[i].line_number, i + 1);
}

// The real derived files (and a plain original) written out as a live driver would, then renamed.
TEST(EventLogLiveTail, RealLogsGrowingInSmallPiecesArriveExactlyOnce) {
  const std::filesystem::path data = DataDir();
  if (data.empty()) GTEST_SKIP() << kNoDataMessage;
  struct Case {
    std::string file;  // under shared/data
    std::string source;
  };
  const std::vector<Case> cases = {
      {"spark-events-derived/local-1642039451826.zstd", "spark-events/local-1642039451826"},
      {"spark-events-derived/local-1642039451826.lz4", "spark-events/local-1642039451826"},
      {"spark-events-derived/app-20200706201101-0003.snappy", "spark-events/app-20200706201101-0003"},
      {"spark-events/application_1628109047826_1317105", "spark-events/application_1628109047826_1317105"},
  };
  for (const Case& log : cases) {
    SCOPED_TRACE(log.file);
    TempDir directory;
    const std::string final_name = std::filesystem::path(log.file).filename().string();
    const std::filesystem::path live = directory.path() / (final_name + ".inprogress");
    const std::string id = (directory.path() / final_name).string();
    const std::vector<std::string> expected = SplitLines(ReadFileBytes(data / log.source));
    auto scanner = MakeTailScanner(directory.path());
    RecordingSink sink;

    WriteFileBytes(live, "");
    GrowAndPoll(live, ReadFileBytes(data / log.file), *scanner, sink, id, expected);
    ASSERT_EQ(scanner->statuses().size(), 1u);
    EXPECT_EQ(scanner->statuses()[0].state, LogState::kInProgress);

    std::filesystem::rename(live, directory.path() / final_name);  // the application stopped
    PollUntilIdle(*scanner, sink);
    EXPECT_EQ(sink.Texts(id), expected);
    ExpectLineNumbersCount(sink, id);
    const LogStatus status = scanner->statuses()[0];
    EXPECT_EQ(status.state, LogState::kComplete);
    EXPECT_EQ(sink.Completions(id), 1);
    EXPECT_EQ(status.counters.bytes_read, std::filesystem::file_size(directory.path() / final_name));
    ExpectNothingWrong(status);
  }
}

// Synthetic streams whose frames/blocks cut through lines, still open (no close, no end mark).
TEST(EventLogLiveTail, OpenStreamsWithFramesAcrossLines) {
  const std::vector<std::string> lines = MakeEventLines(400, 3);
  const std::string text = JoinLines(lines);
  struct Case {
    std::string name;
    std::string stream;
  };
  std::string zstd_frames;
  for (std::size_t start = 0; start < text.size(); start += 777)
    zstd_frames += ZstdFrame(text.substr(start, 777));
  std::string lz4_blocks;  // 1000-byte blocks (written as a flush would), no end mark: the stream is open
  for (std::size_t start = 0; start < text.size(); start += 1000) {
    lz4_blocks += Lz4JavaStream(text.substr(start, 1000), start % 3000 == 0, /*end_mark=*/false);
  }
  const std::vector<Case> cases = {
      {"app-zstd.zstd", zstd_frames},
      {"app-lz4.lz4", lz4_blocks},
      {"app-snappy.snappy", SnappyJavaStream(text, 555)},
      {"app-plain", text},
  };
  for (const Case& log : cases) {
    SCOPED_TRACE(log.name);
    TempDir directory;
    const std::filesystem::path live = directory.path() / (log.name + ".inprogress");
    const std::string id = (directory.path() / log.name).string();
    auto scanner = MakeTailScanner(directory.path());
    RecordingSink sink;
    WriteFileBytes(live, "");
    GrowAndPoll(live, log.stream, *scanner, sink, id, lines);
    EXPECT_EQ(sink.Texts(id), lines);
    ExpectLineNumbersCount(sink, id);
    ASSERT_EQ(scanner->statuses().size(), 1u);
    EXPECT_EQ(scanner->statuses()[0].state, LogState::kInProgress);
    ExpectNothingWrong(scanner->statuses()[0]);
  }
}

// Spark 4's default layout, live: the directory, the marker, events files appearing one after the
// other, and the marker's rename when the application stops.
TEST(EventLogLiveTail, RollingLogWithLateFilesAndTheAppStatusRename) {
  TempDir root;
  const std::vector<std::string> lines = MakeEventLines(300, 5);
  const std::filesystem::path log_directory = root.path() / "eventlog_v2_spark-abc123";
  const std::string id = log_directory.string();
  auto scanner = MakeTailScanner(root.path());
  RecordingSink sink;

  PollUntilIdle(*scanner, sink);
  EXPECT_TRUE(scanner->statuses().empty());

  std::filesystem::create_directory(log_directory);
  WriteFileBytes(log_directory / "appstatus_spark-abc123.inprogress", "");
  PollUntilIdle(*scanner, sink);
  ASSERT_EQ(scanner->statuses().size(), 1u);
  EXPECT_EQ(scanner->statuses()[0].identity.layout, LogLayout::kRolling);
  EXPECT_EQ(scanner->statuses()[0].identity.name, "spark-abc123");

  // events_1 grows (frames per 3 lines, as flushes would cut them), then events_2 appears.
  const auto frames = [&](std::size_t begin, std::size_t end) {
    std::string stream;
    for (std::size_t i = begin; i < end; i += 3)
      stream += ZstdFrame(JoinLines(lines, i, std::min(end, i + 3)));
    return stream;
  };
  const std::filesystem::path first = log_directory / "events_1_spark-abc123.zstd";
  WriteFileBytes(first, "");
  GrowAndPoll(first, frames(0, 120), *scanner, sink, id, lines);
  EXPECT_EQ(sink.Texts(id).size(), 120u);

  const std::filesystem::path second = log_directory / "events_2_spark-abc123.zstd";
  const std::string second_stream = frames(120, 250);
  WriteFileBytes(second, second_stream.substr(0, second_stream.size() / 2));
  PollUntilIdle(*scanner, sink);
  EXPECT_GT(sink.Texts(id).size(), 120u);
  EXPECT_LT(sink.Texts(id).size(), 250u);
  GrowAndPoll(second, second_stream.substr(second_stream.size() / 2), *scanner, sink, id, lines);
  EXPECT_EQ(sink.Texts(id).size(), 250u);

  // The last file and the marker's rename show up in the same poll: everything is still read first.
  WriteFileBytes(log_directory / "events_3_spark-abc123.zstd", frames(250, 300));
  std::filesystem::rename(log_directory / "appstatus_spark-abc123.inprogress",
                          log_directory / "appstatus_spark-abc123");
  PollUntilIdle(*scanner, sink);

  EXPECT_EQ(sink.Texts(id), lines);
  ExpectLineNumbersCount(sink, id);
  const auto& delivered = sink.Lines(id);
  EXPECT_EQ(delivered[119].file_index, 1u);
  EXPECT_EQ(delivered[120].file_index, 2u);
  EXPECT_EQ(delivered[120].decoded_offset, 0u);
  EXPECT_EQ(delivered[299].file_index, 3u);
  const LogStatus status = scanner->statuses()[0];
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(sink.Completions(id), 1);
  ExpectNothingWrong(status);
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
