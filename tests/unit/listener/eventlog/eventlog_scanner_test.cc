// The scanner and the followers on temporary directories: renames, replacement and truncation of
// logs, unsupported codecs, corrupt streams and lines, budgets, and directories that come and go.
// Polls are driven explicitly; nothing waits for time to pass.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "listener/eventlog/event_log_scanner.h"
#include "tests/unit/listener/eventlog/eventlog_test_support.h"

namespace sparktrace::listener::eventlog {
namespace {

using testing::AppendFileBytes;
using testing::JoinLines;
using testing::MakeEventLines;
using testing::OptionsFor;
using testing::PollUntilIdle;
using testing::RecordingSink;
using testing::TempDir;
using testing::WriteFileBytes;
using testing::ZstdFrame;

std::unique_ptr<EventLogScanner> MakeScanner(std::vector<std::string> directories,
                                             FollowOptions follow = {}) {
  ScannerOptions options;
  options.directories = std::move(directories);
  options.follow = follow;
  auto scanner = EventLogScanner::Create(std::move(options));
  EXPECT_TRUE(scanner.ok()) << scanner.error().ToString();
  return std::move(scanner).value();
}

std::unique_ptr<EventLogScanner> MakeScanner(const TempDir& directory, FollowOptions follow = {}) {
  return MakeScanner(std::vector<std::string>{directory.path().string()}, follow);
}

LogStatus OnlyStatus(const EventLogScanner& scanner) {
  const std::vector<LogStatus> statuses = scanner.statuses();
  EXPECT_EQ(statuses.size(), 1u);
  return statuses.empty() ? LogStatus{} : statuses.front();
}

// Replaces `path` by a new file (new inode), as a driver writing a fresh log would.
void ReplaceFile(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path staging = path.parent_path() / ".staging";
  WriteFileBytes(staging, bytes);
  std::filesystem::rename(staging, path);
}

TEST(EventLogScanner, RenameToFinalNameContinuesWhereItStopped) {
  TempDir directory;
  const std::vector<std::string> lines = MakeEventLines(20);
  const std::string text = JoinLines(lines);
  const std::filesystem::path live = directory.path() / "local-1.inprogress";
  const std::string id = (directory.path() / "local-1").string();
  WriteFileBytes(live, text.substr(0, text.size() / 2));  // ends inside a line
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  const std::size_t first_batch = sink.Texts(id).size();
  EXPECT_GT(first_batch, 0u);
  EXPECT_LT(first_batch, lines.size());

  AppendFileBytes(live, text.substr(text.size() / 2));
  std::filesystem::rename(live, directory.path() / "local-1");  // same inode: not a restart
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), lines);
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(status.counters.restarts, 0u);
  EXPECT_EQ(status.counters.bytes_read, text.size());  // every byte read once
  EXPECT_EQ(sink.Lines(id).back().file_path, (directory.path() / "local-1").string());
  EXPECT_EQ(sink.Completions(id), 1);

  PollUntilIdle(*scanner, sink);  // a finished log is left alone
  EXPECT_EQ(OnlyStatus(*scanner).counters.bytes_read, text.size());
  EXPECT_EQ(sink.Completions(id), 1);
}

TEST(EventLogScanner, ReplacedFileRestartsTheLogFromItsStart) {
  TempDir directory;
  const std::vector<std::string> before = MakeEventLines(30, 1);
  const std::vector<std::string> after = MakeEventLines(10, 2);
  const std::filesystem::path live = directory.path() / "app-1.zstd.inprogress";
  const std::string id = (directory.path() / "app-1.zstd").string();
  WriteFileBytes(live, ZstdFrame(JoinLines(before)));
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), before);

  ReplaceFile(live, ZstdFrame(JoinLines(after)));  // the driver restarted and rewrote its log
  sink.Clear(id);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), after);
  ASSERT_EQ(sink.Restarts(id).size(), 1u);
  EXPECT_TRUE(sink.Restarts(id)[0].starts_with("1: ")) << sink.Restarts(id)[0];
  EXPECT_EQ(sink.Lines(id).front().generation, 1u);
  EXPECT_EQ(sink.Lines(id).front().line_number, 1u);
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.counters.restarts, 1u);
  EXPECT_EQ(status.generation, 1u);
  EXPECT_EQ(status.counters.lines, before.size() + after.size());
}

TEST(EventLogScanner, TruncatedFileRestartsTheLog) {
  TempDir directory;
  const std::filesystem::path live = directory.path() / "app-2.inprogress";
  const std::string id = (directory.path() / "app-2").string();
  WriteFileBytes(live, "{\"Event\":\"one\"}\n{\"Event\":\"two\"}\n{\"Event\":\"three\"}\n");
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  ASSERT_EQ(sink.Texts(id).size(), 3u);

  ASSERT_EQ(::truncate(live.c_str(), 0), 0);  // same inode, shorter content
  AppendFileBytes(live, "{\"Event\":\"new\"}\n");
  sink.Clear(id);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), std::vector<std::string>{"{\"Event\":\"new\"}"});
  EXPECT_EQ(OnlyStatus(*scanner).counters.restarts, 1u);
}

TEST(EventLogScanner, NewRunNextToAFinishedLogRestartsIt) {
  TempDir directory;
  const std::filesystem::path finished = directory.path() / "app-3";
  const std::string id = finished.string();
  WriteFileBytes(finished, "{\"Event\":\"old\"}\n");
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kComplete);

  // spark.eventLog.overwrite=true: a new run writes app-3.inprogress while the old app-3 is still there.
  WriteFileBytes(directory.path() / "app-3.inprogress", "{\"Event\":\"new\"}\n");
  sink.Clear(id);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), std::vector<std::string>{"{\"Event\":\"new\"}"});
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kInProgress);
  EXPECT_EQ(status.counters.restarts, 1u);
}

TEST(EventLogScanner, CorruptBlankAndOversizedLinesAreCountedAndSkipped) {
  TempDir directory;
  FollowOptions follow;
  follow.max_line_bytes = 100;
  const std::string id = (directory.path() / "app-4").string();
  WriteFileBytes(directory.path() / "app-4",
                 "{\"Event\":\"a\"}\n\n   \nBAD json\n" + std::string(500, 'x') + "\n{\"Event\":\"b\"}\n");
  auto scanner = MakeScanner(directory, follow);
  RecordingSink sink;
  sink.AnswerCorruptFor("BAD");
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), (std::vector<std::string>{"{\"Event\":\"a\"}", "BAD json", "{\"Event\":\"b\"}"}));
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.counters.lines, 3u);          // handed to the sink
  EXPECT_EQ(status.counters.corrupt_lines, 3u);  // two blank, one refused by the sink
  EXPECT_EQ(status.counters.oversized_lines, 1u);
  EXPECT_EQ(status.state, LogState::kComplete);
}

TEST(EventLogScanner, UnsupportedCodecsAreReportedAndNeverRead) {
  TempDir directory;
  WriteFileBytes(directory.path() / "app-5.lzf", "ZV\x00...");
  WriteFileBytes(directory.path() / "app-6.gz.inprogress", "\x1f\x8b");
  const std::filesystem::path rolling = directory.path() / "eventlog_v2_app-7";
  std::filesystem::create_directory(rolling);
  WriteFileBytes(rolling / "events_1_app-7.lzf", "ZV");
  WriteFileBytes(rolling / "appstatus_app-7.inprogress", "");
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  PollUntilIdle(*scanner, sink);
  const FeedCounters counters = scanner->counters();
  EXPECT_EQ(counters.logs_unsupported, 3u);
  EXPECT_EQ(counters.totals.bytes_read, 0u);
  for (const LogStatus& status : scanner->statuses()) {
    EXPECT_EQ(status.state, LogState::kUnsupported) << status.identity.id;
    EXPECT_NE(
        status.problem.find(status.identity.id.ends_with("app-6.gz") ? "unknown compression codec" : "lzf"),
        std::string::npos)
        << status.problem;
  }
}

TEST(EventLogScanner, CorruptStreamFailsTheLogUntilTheFileIsReplaced) {
  TempDir directory;
  const std::filesystem::path path = directory.path() / "app-8.zstd";
  const std::string id = path.string();
  WriteFileBytes(path, ZstdFrame("{\"Event\":\"ok\"}\n") + "this is not a zstd frame");
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), std::vector<std::string>{"{\"Event\":\"ok\"}"});  // what came before is kept
  LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kFailed);
  EXPECT_EQ(status.counters.decode_errors, 1u);  // once, not once per poll
  EXPECT_NE(status.problem.find("zstd"), std::string::npos) << status.problem;
  EXPECT_EQ(scanner->counters().logs_failed, 1u);

  ReplaceFile(path, ZstdFrame("{\"Event\":\"fixed\"}\n"));
  sink.Clear(id);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), std::vector<std::string>{"{\"Event\":\"fixed\"}"});
  status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(status.counters.restarts, 1u);
}

TEST(EventLogScanner, FinishedFileCutInsideAFrameKeepsItsCompleteLines) {
  TempDir directory;
  const std::string id = (directory.path() / "app-9.zstd").string();
  const std::string second = ZstdFrame(JoinLines(MakeEventLines(50)));
  WriteFileBytes(directory.path() / "app-9.zstd",
                 ZstdFrame("{\"Event\":\"a\"}\n{\"Event\":\"b\"}\n") + second.substr(0, second.size() / 2));
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), (std::vector<std::string>{"{\"Event\":\"a\"}", "{\"Event\":\"b\"}"}));
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(status.counters.decode_errors, 1u);
  EXPECT_NE(status.problem.find("ends inside a compressed frame"), std::string::npos) << status.problem;
}

TEST(EventLogScanner, FinishedPlainFileWithoutFinalNewlineKeepsItsLastLine) {
  TempDir directory;
  const std::string id = (directory.path() / "app-10").string();
  WriteFileBytes(directory.path() / "app-10.inprogress", "{\"Event\":\"a\"}\n{\"Event\":\"End\"}");
  auto scanner = MakeScanner(directory);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), std::vector<std::string>{"{\"Event\":\"a\"}"});  // live: the tail may grow
  std::filesystem::rename(directory.path() / "app-10.inprogress", directory.path() / "app-10");
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(id), (std::vector<std::string>{"{\"Event\":\"a\"}", "{\"Event\":\"End\"}"}));
  EXPECT_EQ(OnlyStatus(*scanner).counters.truncated_lines, 0u);
}

TEST(EventLogScanner, ByteBudgetSpreadsAReadOverPollsWithoutLosingLines) {
  TempDir directory;
  FollowOptions follow;
  follow.read_chunk_bytes = 100;
  follow.max_bytes_per_poll = 1000;
  const std::vector<std::string> lines = MakeEventLines(200);
  const std::string text = JoinLines(lines);
  const std::string id = (directory.path() / "app-11").string();
  WriteFileBytes(directory.path() / "app-11", text);
  auto scanner = MakeScanner(directory, follow);
  RecordingSink sink;
  int polls = 1;
  while (scanner->Poll(sink)) ++polls;
  EXPECT_GE(polls, static_cast<int>(text.size() / 1000));
  EXPECT_EQ(sink.Texts(id), lines);
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kComplete);
}

TEST(EventLogScanner, LateDirectoriesAreFoundAndGoneLogsForgotten) {
  TempDir root;
  const std::filesystem::path late = root.path() / "spark-events";
  auto scanner = MakeScanner({late.string(), late.string() + "/"});  // the same directory twice
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(scanner->counters().directory_errors, 1u);

  std::filesystem::create_directory(late);
  WriteFileBytes(late / "app-12", "{\"Event\":\"x\"}\n");
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts((late / "app-12").string()).size(), 1u);
  EXPECT_EQ(scanner->counters().logs_discovered, 1u);

  std::filesystem::remove(late / "app-12");
  for (int listing = 0; listing < 3; ++listing) PollUntilIdle(*scanner, sink);
  const FeedCounters counters = scanner->counters();
  EXPECT_TRUE(scanner->statuses().empty());
  EXPECT_EQ(counters.logs_forgotten, 1u);
  EXPECT_EQ(counters.totals.lines, 1u);  // what it delivered stays counted
}

TEST(EventLogScanner, SeveralDirectoriesKeepTheirLogsApart) {
  TempDir first;
  TempDir second;
  WriteFileBytes(first.path() / "app-13", "{\"Event\":\"first\"}\n");
  WriteFileBytes(second.path() / "app-13", "{\"Event\":\"second\"}\n");
  auto scanner = MakeScanner({first.path().string(), second.path().string()});
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts((first.path() / "app-13").string()),
            std::vector<std::string>{"{\"Event\":\"first\"}"});
  EXPECT_EQ(sink.Texts((second.path() / "app-13").string()),
            std::vector<std::string>{"{\"Event\":\"second\"}"});
  for (const auto& [id, identity] : sink.Identities()) EXPECT_EQ(identity.name, "app-13");
}

TEST(EventLogScanner, RollingLogSkipsACorruptFileAndGoesOn) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-14";
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "appstatus_app-14.inprogress", "");
  WriteFileBytes(log / "events_1_app-14.zstd", ZstdFrame("{\"Event\":\"one\"}\n") + "garbage");
  auto scanner = MakeScanner(root);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(OnlyStatus(*scanner).counters.decode_errors, 1u);
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kInProgress);

  WriteFileBytes(log / "events_2_app-14.zstd", ZstdFrame("{\"Event\":\"two\"}\n"));
  std::filesystem::rename(log / "appstatus_app-14.inprogress", log / "appstatus_app-14");
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(log.string()),
            (std::vector<std::string>{"{\"Event\":\"one\"}", "{\"Event\":\"two\"}"}));
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(status.counters.decode_errors, 1u);
}

TEST(EventLogScanner, RollingLogWhoseLastFileIsCorruptStillCompletes) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-19";
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "events_1_app-19.lz4", "LZ4Block\x25 this is no lz4 block header");
  WriteFileBytes(log / "appstatus_app-19", "");
  auto scanner = MakeScanner(root);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(status.counters.decode_errors, 1u);
  EXPECT_NE(status.problem.find("events_1_app-19.lz4: lz4 block 0"), std::string::npos) << status.problem;
}

TEST(EventLogScanner, RollingLogWhoseDirectoryIsReplacedRestarts) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-15";
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "appstatus_app-15.inprogress", "");
  WriteFileBytes(log / "events_1_app-15", "{\"Event\":\"old 1\"}\n");
  WriteFileBytes(log / "events_2_app-15", "{\"Event\":\"old 2\"}\n");
  auto scanner = MakeScanner(root);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(log.string()).size(), 2u);

  std::filesystem::rename(log, root.path() / "old-copy");  // kept (so no inode is reused), not a log name
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "appstatus_app-15.inprogress", "");
  WriteFileBytes(log / "events_1_app-15", "{\"Event\":\"new 1\"}\n");
  sink.Clear(log.string());
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(log.string()), std::vector<std::string>{"{\"Event\":\"new 1\"}"});
  EXPECT_EQ(OnlyStatus(*scanner).counters.restarts, 1u);
}

TEST(EventLogScanner, RollingLogWithoutEventsFilesCompletesWhenMarked) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-16";
  std::filesystem::create_directory(log);
  auto scanner = MakeScanner(root);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kInProgress);  // no marker yet: not finished
  WriteFileBytes(log / "appstatus_app-16", "");
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kComplete);
  EXPECT_EQ(sink.Completions(log.string()), 1);
}

TEST(EventLogScanner, RollingLogReadsOriginalsBeforeCompactedFiles) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-17";
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "appstatus_app-17", "");
  WriteFileBytes(log / "events_1_app-17", "{\"Event\":\"1\"}\n");
  WriteFileBytes(log / "events_2_app-17", "{\"Event\":\"2\"}\n");
  // The History Server's compactor wrote a summary of 1..2 and has not deleted the originals yet.
  WriteFileBytes(log / "events_2_app-17.compact", "{\"Event\":\"summary of 1-2\"}\n");
  WriteFileBytes(log / "events_10_app-17", "{\"Event\":\"10\"}\n");  // numeric, not text, order
  WriteFileBytes(log / "events_3_app-17", "{\"Event\":\"3\"}\n");
  auto scanner = MakeScanner(root);
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  EXPECT_EQ(sink.Texts(log.string()), (std::vector<std::string>{"{\"Event\":\"1\"}", "{\"Event\":\"2\"}",
                                                                "{\"Event\":\"3\"}", "{\"Event\":\"10\"}"}));
  EXPECT_EQ(OnlyStatus(*scanner).state, LogState::kComplete);
}

TEST(EventLogScanner, DirectoryThatIsItselfARollingLogIsFollowedAsOne) {
  TempDir root;
  const std::filesystem::path log = root.path() / "eventlog_v2_app-18";
  std::filesystem::create_directory(log);
  WriteFileBytes(log / "appstatus_app-18", "");
  WriteFileBytes(log / "events_1_app-18.zstd", ZstdFrame("{\"Event\":\"only\"}\n"));
  auto scanner = MakeScanner({log.string()});
  RecordingSink sink;
  PollUntilIdle(*scanner, sink);
  const LogStatus status = OnlyStatus(*scanner);
  EXPECT_EQ(status.identity.id, log.string());
  EXPECT_EQ(status.identity.layout, LogLayout::kRolling);
  EXPECT_EQ(status.state, LogState::kComplete);
  EXPECT_EQ(sink.Texts(log.string()), std::vector<std::string>{"{\"Event\":\"only\"}"});
}

TEST(EventLogScanner, CreateValidatesItsOptions) {
  EXPECT_FALSE(EventLogScanner::Create(ScannerOptions{}).ok());
  EXPECT_FALSE(EventLogScanner::Create(OptionsFor({""})).ok());
  ScannerOptions no_lines = OptionsFor({"/tmp"});
  no_lines.follow.max_line_bytes = 0;
  EXPECT_FALSE(EventLogScanner::Create(no_lines).ok());
  ScannerOptions no_budget = OptionsFor({"/tmp"});
  no_budget.follow.max_bytes_per_poll = 0;
  EXPECT_FALSE(EventLogScanner::Create(no_budget).ok());
  ScannerOptions never_forget = OptionsFor({"/tmp"});
  never_forget.forget_after_missing_listings = 0;
  EXPECT_FALSE(EventLogScanner::Create(never_forget).ok());
  EXPECT_TRUE(EventLogScanner::Create(OptionsFor({"/does/not/exist/yet"})).ok());
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
