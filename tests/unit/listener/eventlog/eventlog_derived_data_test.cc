// The real Spark event logs in shared/data (README there): every compressed, rolling and in-progress
// variant in spark-events-derived/ decodes to exactly the lines of its plain original in spark-events/
// (a line-aligned prefix for the in-progress ones), whichever way its bytes are split.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "listener/eventlog/chunk_decoder.h"
#include "listener/eventlog/event_log_scanner.h"
#include "listener/eventlog/line_assembler.h"
#include "tests/unit/listener/eventlog/eventlog_test_support.h"

namespace sparktrace::listener::eventlog {
namespace {

using testing::DataDir;
using testing::kNoDataMessage;
using testing::OptionsFor;
using testing::ReadFileBytes;
using testing::RecordingSink;
using testing::SplitLines;

struct DerivedLog {
  std::string derived;       // under spark-events-derived/ (a file or an eventlog_v2_ directory)
  std::string id_name;       // the log id's last component (final name, without .inprogress)
  std::string source;        // the plain original under spark-events/
  std::size_t events;        // lines it decodes to (shared/data/README.md)
  std::size_t source_bytes;  // how much of the original they are
  std::string last_event;
  bool complete;
};

const std::vector<DerivedLog>& DerivedLogs() {
  static const std::vector<DerivedLog> logs = {
      {"local-1642039451826.zstd", "local-1642039451826.zstd", "local-1642039451826", 115, 412749,
       "SparkListenerApplicationEnd", true},
      {"local-1642039451826.lz4", "local-1642039451826.lz4", "local-1642039451826", 115, 412749,
       "SparkListenerApplicationEnd", true},
      {"app-20200706201101-0003.snappy", "app-20200706201101-0003.snappy", "app-20200706201101-0003", 124,
       266554, "SparkListenerApplicationEnd", true},
      {"local-1596020211915.zstd.inprogress", "local-1596020211915.zstd", "local-1596020211915", 100, 455042,
       "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd", false},
      {"local-1430917381534.zstd.inprogress", "local-1430917381534.zstd", "local-1430917381534", 5, 8997,
       "SparkListenerJobStart", false},
      {"eventlog_v2_application_1628109047826_1317105", "eventlog_v2_application_1628109047826_1317105",
       "application_1628109047826_1317105", 52, 63358, "SparkListenerApplicationEnd", true},
      {"eventlog_v2_app-20200706201101-0003", "eventlog_v2_app-20200706201101-0003",
       "app-20200706201101-0003", 85, 201184, "SparkListenerJobStart", false},
  };
  return logs;
}

std::vector<std::string> ExpectedLines(const std::filesystem::path& data, const DerivedLog& log) {
  const std::string source = ReadFileBytes(data / "spark-events" / log.source);
  EXPECT_LE(log.source_bytes, source.size());
  return SplitLines(std::string_view(source).substr(0, log.source_bytes));
}

TEST(EventLogDerivedData, ScannerDeliversExactlyTheOriginalLines) {
  const std::filesystem::path data = DataDir();
  if (data.empty()) GTEST_SKIP() << kNoDataMessage;
  const std::string directory = (data / "spark-events-derived").string();
  auto scanner = EventLogScanner::Create(OptionsFor({directory}));
  ASSERT_TRUE(scanner.ok()) << scanner.error().ToString();
  RecordingSink sink;
  while ((*scanner)->Poll(sink)) {
  }

  std::map<std::string, LogStatus> by_id;
  for (LogStatus& status : (*scanner)->statuses()) by_id[status.identity.id] = status;
  ASSERT_EQ(by_id.size(), DerivedLogs().size());
  for (const DerivedLog& log : DerivedLogs()) {
    SCOPED_TRACE(log.derived);
    const std::string id = directory + "/" + log.id_name;
    ASSERT_TRUE(by_id.contains(id));
    const LogStatus& status = by_id[id];
    const std::vector<std::string> lines = sink.Texts(id);
    EXPECT_EQ(lines.size(), log.events);
    EXPECT_EQ(lines, ExpectedLines(data, log));
    ASSERT_FALSE(lines.empty());
    EXPECT_TRUE(lines.back().starts_with("{\"Event\":\"" + log.last_event + "\""))
        << lines.back().substr(0, 80);
    EXPECT_EQ(status.state, log.complete ? LogState::kComplete : LogState::kInProgress);
    EXPECT_EQ(sink.Completions(id), log.complete ? 1 : 0);
    EXPECT_EQ(status.counters.lines, log.events);
    EXPECT_EQ(status.counters.decoded_bytes, log.source_bytes);
    EXPECT_EQ(status.counters.corrupt_lines + status.counters.oversized_lines +
                  status.counters.truncated_lines + status.counters.decode_errors +
                  status.counters.read_errors + status.counters.restarts,
              0u);
    EXPECT_EQ(status.generation, 0u);
  }
  // The rolling log reports which file each line came from; the first line is LogStart of events_1.
  const std::string rolling = directory + "/eventlog_v2_application_1628109047826_1317105";
  const auto& rolled = sink.Lines(rolling);
  EXPECT_EQ(rolled.front().file_index, 1u);
  EXPECT_EQ(rolled.back().file_index, 5u);
  EXPECT_EQ(rolled.back().line_number, 52u);
  EXPECT_TRUE(rolled.back().file_path.ends_with("/events_5_application_1628109047826_1317105.zstd"));

  // Nothing more to read, and finished logs are not read again.
  const std::uint64_t bytes_before = (*scanner)->counters().totals.bytes_read;
  EXPECT_FALSE((*scanner)->Poll(sink));
  EXPECT_EQ((*scanner)->counters().totals.bytes_read, bytes_before);
  const FeedCounters counters = (*scanner)->counters();
  EXPECT_EQ(counters.logs_discovered, 7u);
  EXPECT_EQ(counters.logs_complete, 4u);
  EXPECT_EQ(counters.logs_in_progress, 3u);
}

// The decoders alone, fed the real files in pieces that cut frames, blocks and lines anywhere.
TEST(EventLogDerivedData, DecodersGiveTheSameLinesForAnySplit) {
  const std::filesystem::path data = DataDir();
  if (data.empty()) GTEST_SKIP() << kNoDataMessage;
  for (const DerivedLog& log : DerivedLogs()) {
    if (log.derived.starts_with("eventlog_v2_")) continue;  // the scanner test covers the rolling ones
    const std::string stream = ReadFileBytes(data / "spark-events-derived" / log.derived);
    const std::vector<std::string> expected = ExpectedLines(data, log);
    const Codec codec = log.id_name.ends_with(".zstd")  ? Codec::kZstd
                        : log.id_name.ends_with(".lz4") ? Codec::kLz4
                                                        : Codec::kSnappy;
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{4093}, std::size_t{1} << 20}) {
      SCOPED_TRACE(log.derived + " in chunks of " + std::to_string(chunk));
      auto decoder = std::move(MakeChunkDecoder(codec)).value();
      LineAssembler assembler(std::size_t{64} << 20);
      std::vector<std::string> lines;
      const LineAssembler::LineHandler collect = [&](std::string_view line, std::uint64_t) {
        lines.emplace_back(line);
      };
      for (std::size_t start = 0; start < stream.size(); start += chunk) {
        ASSERT_TRUE(decoder
                        ->Decode(std::string_view(stream).substr(start, chunk),
                                 [&](std::string_view decoded) { assembler.Append(decoded, collect); })
                        .ok());
      }
      EXPECT_EQ(lines, expected);
      // Only the deliberately cut file ends inside a frame; the others end at a unit boundary.
      EXPECT_EQ(decoder->HoldsIncompleteUnit(), log.derived == "local-1430917381534.zstd.inprogress");
    }
  }
}

TEST(EventLogDerivedData, EveryPlainOriginalIsDeliveredWhole) {
  const std::filesystem::path data = DataDir();
  if (data.empty()) GTEST_SKIP() << kNoDataMessage;
  const std::string directory = (data / "spark-events").string();
  auto scanner = EventLogScanner::Create(OptionsFor({directory}));
  ASSERT_TRUE(scanner.ok());
  RecordingSink sink;
  while ((*scanner)->Poll(sink)) {
  }
  const std::vector<LogStatus> statuses = (*scanner)->statuses();
  EXPECT_EQ(statuses.size(), 19u);
  for (const LogStatus& status : statuses) {
    SCOPED_TRACE(status.identity.id);
    EXPECT_EQ(status.state, LogState::kComplete);
    // Two originals (local-1430917381535_1/_2) lack the final newline: their last event still counts.
    EXPECT_EQ(sink.Texts(status.identity.id), SplitLines(ReadFileBytes(status.identity.id)));
  }
  const FeedCounters counters = (*scanner)->counters();
  EXPECT_EQ(counters.logs_complete, 19u);
  EXPECT_EQ(counters.totals.truncated_lines + counters.totals.corrupt_lines + counters.totals.decode_errors,
            0u);
}

// Real logs from other tools (spark-rapids-tools), including Spark's own rolling zstd layout.
TEST(EventLogDerivedData, ProblemLogsDecodeToTheirDocumentedLineCounts) {
  const std::filesystem::path data = DataDir();
  if (data.empty()) GTEST_SKIP() << kNoDataMessage;
  const std::string directory = (data / "spark-events-problems").string();
  if (!std::filesystem::is_directory(directory)) GTEST_SKIP() << directory << " not found";
  const std::map<std::string, std::size_t> expected_lines = {
      {"aqeshuffle_eventlog.zstd", 85},
      {"complex_dec_eventlog.zstd", 187},
      {"dataproc.zstd", 393},
      {"db_subExecution_id.zstd", 368},
      {"eventlog_4nodes_8cores_dynamic_alloc.zstd", 665},
      {"eventlog_v2_local-1623876083964", 5621},
      {"gpu_oom_eventlog.zstd", 25084},
      {"jdbc_eventlog.zstd", 432},
      {"join_missing_sql_end", 443},
      {"malformed_json_eventlog.zstd", 477},
      {"nds_q66_gpu.zstd", 26214},
      {"nds_q72_dataproc_2_2.zstd", 27321},
      {"nds_q88_photon_db_13_3.zstd", 10141},
      {"python_udf_eventlog", 23},
      {"tasks_executors_fail_compressed_eventlog.zstd", 17717},
      {"truncated_eventlog", 62},
  };
  auto scanner = EventLogScanner::Create(OptionsFor({directory}));
  ASSERT_TRUE(scanner.ok());
  RecordingSink sink;
  while ((*scanner)->Poll(sink)) {
  }
  std::map<std::string, std::size_t> got_lines;
  for (const LogStatus& status : (*scanner)->statuses()) {
    got_lines[std::filesystem::path(status.identity.id).filename().string()] = status.counters.lines;
    EXPECT_EQ(status.state, LogState::kComplete) << status.identity.id;
  }
  // db_sim_eventlog/ and multiple_attempts/ are plain directories, not logs of this layout.
  EXPECT_EQ(got_lines, expected_lines);
  EXPECT_EQ((*scanner)->counters().totals.decode_errors, 0u);
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
