// SpanSpool: record framing, order across segments, capacity, and opening (locks, bad directories, options).
#include "tracing/store/spool/span_spool.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/span_spool_test_support.h"
#include "tracing/store/spool/span_codec.h"

namespace sparktrace::tracing::store {
namespace {

std::uint64_t SegmentBytes(const fs::path& directory) {
  std::uint64_t total = 0;
  for (const fs::path& file : SegmentFiles(directory)) total += fs::file_size(file);
  return total;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(SpanSpoolTest, ReferenceCrcIsCrc32c) { EXPECT_EQ(ReferenceCrc32c("123456789"), 0xE3069283U); }

TEST_F(SpanSpoolTest, OpenCreatesAPrivateDirectoryAndStartsEmpty) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_TRUE(fs::is_directory(directory()));
  struct stat status {};
  ASSERT_EQ(::stat(directory().c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700U);
  EXPECT_TRUE(spool->empty());
  EXPECT_EQ(spool->bytes(), 0U);
  EXPECT_EQ(spool->batches(), 0U);
  Result<std::optional<SpooledBatch>> batch = spool->Peek();
  ASSERT_TRUE(batch.ok());
  EXPECT_FALSE(batch->has_value());
}

TEST_F(SpanSpoolTest, RecordsAreFramedAsDocumented) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  const std::vector<Span> batch = Batch(1);
  AppendOrDie(*spool, batch);
  const std::vector<fs::path> files = SegmentFiles(directory());
  ASSERT_EQ(files.size(), 1U);
  EXPECT_EQ(files[0].filename(), "segment-00000000000000000001.spool");
  EXPECT_EQ(ReadFile(files[0]), FramedRecord(EncodeSpans(batch)));
  EXPECT_EQ(spool->bytes(), RecordBytes(batch));
}

TEST_F(SpanSpoolTest, AppendPeekAcknowledgeInOrderAcrossSegmentRolls) {
  const std::uint64_t record = RecordBytes(Batch(1));
  // Three records a segment.
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 3 + record / 2));
  ASSERT_NE(spool, nullptr);
  for (std::uint32_t n = 1; n <= 10; ++n) AppendOrDie(*spool, Batch(n));
  EXPECT_EQ(SegmentFiles(directory()).size(), 4U);
  EXPECT_EQ(spool->batches(), 10U);
  EXPECT_EQ(spool->bytes(), SegmentBytes(directory()));
  EXPECT_EQ(spool->bytes(), RecordBytes(1, 10));

  EXPECT_EQ(Drain(*spool), Range(1, 10));
  EXPECT_TRUE(spool->empty());
  EXPECT_EQ(spool->bytes(), 0U);
  EXPECT_TRUE(SegmentFiles(directory()).empty());
  const SpanSpoolCounters counters = spool->counters();
  EXPECT_EQ(counters.appended_batches, 10U);
  EXPECT_EQ(counters.appended_spans, 20U);
  EXPECT_EQ(counters.drained_batches, 10U);
  EXPECT_EQ(counters.drained_spans, 20U);
  EXPECT_EQ(counters.corrupt_records, 0U);
}

TEST_F(SpanSpoolTest, InterleavedAppendsAndDrainsKeepOrder) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/RecordBytes(Batch(1)) * 2));
  ASSERT_NE(spool, nullptr);
  std::vector<std::uint32_t> delivered;
  std::uint32_t next = 1;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 3; ++i) AppendOrDie(*spool, Batch(next++));
    const std::vector<std::uint32_t> some = Drain(*spool, 2);
    delivered.insert(delivered.end(), some.begin(), some.end());
  }
  const std::vector<std::uint32_t> rest = Drain(*spool);
  delivered.insert(delivered.end(), rest.begin(), rest.end());
  EXPECT_EQ(delivered, Range(1, 15));
  EXPECT_TRUE(SegmentFiles(directory()).empty());
}

TEST_F(SpanSpoolTest, PeekReturnsTheSameBatchUntilAcknowledged) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  AppendOrDie(*spool, Batch(1, /*spans=*/3));
  AppendOrDie(*spool, Batch(2));
  Result<std::optional<SpooledBatch>> first = spool->Peek();
  Result<std::optional<SpooledBatch>> again = spool->Peek();
  ASSERT_TRUE(first.ok() && first->has_value());
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ(BatchNumber(**first), 1U);
  EXPECT_EQ(BatchNumber(**again), 1U);
  ASSERT_EQ((*first)->spans.size(), 3U);
  EXPECT_EQ((*first)->spans[2].name, "span-102");

  ASSERT_TRUE(spool->Acknowledge(**first).ok());
  // Twice, or a batch the spool never returned, is refused and changes nothing.
  Result<void> twice = spool->Acknowledge(**again);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(spool->Acknowledge(SpooledBatch{}).ok());
  EXPECT_EQ(spool->batches(), 1U);
  EXPECT_EQ(spool->counters().drained_spans, 3U);
  EXPECT_EQ(Drain(*spool), Range(2, 2));
}

TEST_F(SpanSpoolTest, EmptyBatchWritesNothing) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  ASSERT_TRUE(spool->Append({}).ok());
  EXPECT_TRUE(spool->empty());
  EXPECT_TRUE(SegmentFiles(directory()).empty());
  EXPECT_EQ(spool->counters().appended_batches, 0U);
}

TEST_F(SpanSpoolTest, FullSpoolRejectsWritesNothingAndCounts) {
  const std::uint64_t record = RecordBytes(Batch(1));
  std::unique_ptr<SpanSpool> spool =
      OpenOrDie(Options(/*segment_bytes=*/record * 2, /*max_bytes=*/record * 3 + record / 2));
  ASSERT_NE(spool, nullptr);
  for (std::uint32_t n = 1; n <= 3; ++n) AppendOrDie(*spool, Batch(n));
  const std::uint64_t bytes_on_disk = SegmentBytes(directory());
  const std::size_t files = SegmentFiles(directory()).size();

  Result<void> rejected = spool->Append(Batch(4, /*spans=*/5));
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(rejected.error().message.starts_with("spool full")) << rejected.error().message;
  EXPECT_EQ(SegmentBytes(directory()), bytes_on_disk);
  EXPECT_EQ(SegmentFiles(directory()).size(), files);
  EXPECT_EQ(spool->bytes(), 3 * record);
  EXPECT_EQ(spool->batches(), 3U);
  SpanSpoolCounters counters = spool->counters();
  EXPECT_EQ(counters.rejected_full_batches, 1U);
  EXPECT_EQ(counters.rejected_full_spans, 5U);
  EXPECT_EQ(counters.appended_batches, 3U);

  // Draining one makes room again.
  EXPECT_EQ(Drain(*spool, 1), Range(1, 1));
  AppendOrDie(*spool, Batch(5));
  EXPECT_EQ(Drain(*spool), (std::vector<std::uint32_t>{2, 3, 5}));
}

TEST_F(SpanSpoolTest, BatchLargerThanASegmentGetsOneOfItsOwn) {
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/512));
  ASSERT_NE(spool, nullptr);
  AppendOrDie(*spool, Batch(1, 1, 10));
  AppendOrDie(*spool, Batch(2, 4, 1000));
  AppendOrDie(*spool, Batch(3, 1, 10));
  EXPECT_EQ(SegmentFiles(directory()).size(), 3U);
  EXPECT_EQ(Drain(*spool), Range(1, 3));
}

TEST_F(SpanSpoolTest, AcknowledgedSegmentsAreDeletedFromDisk) {
  const std::uint64_t record = RecordBytes(Batch(1));
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 2));
  ASSERT_NE(spool, nullptr);
  for (std::uint32_t n = 1; n <= 6; ++n) AppendOrDie(*spool, Batch(n));
  const std::vector<fs::path> files = SegmentFiles(directory());
  ASSERT_EQ(files.size(), 3U);

  EXPECT_EQ(Drain(*spool, 1), Range(1, 1));
  EXPECT_TRUE(fs::exists(files[0]));  // half acknowledged
  EXPECT_EQ(spool->bytes(), 5 * record);
  EXPECT_EQ(Drain(*spool, 1), Range(2, 2));
  EXPECT_FALSE(fs::exists(files[0]));
  EXPECT_TRUE(fs::exists(files[1]));
  EXPECT_EQ(Drain(*spool, 3), Range(3, 5));
  EXPECT_EQ(SegmentFiles(directory()), std::vector<fs::path>{files[2]});
  EXPECT_EQ(spool->bytes(), record);
}

TEST_F(SpanSpoolTest, SecondOpenOfTheSameDirectoryFailsNamingIt) {
  std::unique_ptr<SpanSpool> first = OpenOrDie(Options());
  ASSERT_NE(first, nullptr);
  Result<std::unique_ptr<SpanSpool>> second = SpanSpool::Open(Options());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(second.error().message.find(directory().string()), std::string::npos) << second.error().message;
  first.reset();
  EXPECT_NE(OpenOrDie(Options()), nullptr);  // released with the first
}

TEST_F(SpanSpoolTest, DirectoryThatCannotBeCreatedFailsNamingIt) {
  const fs::path file = temp_.path() / "a-file";
  AppendToFile(file, "not a directory");
  for (const fs::path& path : {file, file / "spool"}) {
    SpanSpoolOptions options = Options();
    options.directory = path;
    Result<std::unique_ptr<SpanSpool>> spool = SpanSpool::Open(options);
    ASSERT_FALSE(spool.ok()) << path;
    EXPECT_EQ(spool.error().code, ErrorCode::kIo) << path;
    EXPECT_NE(spool.error().message.find(path.string()), std::string::npos) << spool.error().message;
  }
}

// A directory that cannot be created, whoever runs the test (root included): its parent is a file.
TEST_F(SpanSpoolTest, UnwritableDirectoryFailsNamingIt) {
  AppendToFile(temp_.path() / "blocker", "not a directory");
  SpanSpoolOptions options = Options();
  options.directory = temp_.path() / "blocker" / "spool";
  Result<std::unique_ptr<SpanSpool>> spool = SpanSpool::Open(options);
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.error().code, ErrorCode::kIo);
  EXPECT_NE(spool.error().message.find(options.directory.string()), std::string::npos)
      << spool.error().message;
}

TEST_F(SpanSpoolTest, BadOptionsAreRefused) {
  SpanSpoolOptions no_directory = Options();
  no_directory.directory.clear();
  Result<std::unique_ptr<SpanSpool>> spool = SpanSpool::Open(no_directory);
  ASSERT_FALSE(spool.ok());
  EXPECT_EQ(spool.error().code, ErrorCode::kInvalidArgument);
  Result<std::unique_ptr<SpanSpool>> no_room =
      SpanSpool::Open(Options(/*segment_bytes=*/1024, /*max_bytes=*/0));
  ASSERT_FALSE(no_room.ok());
  EXPECT_EQ(no_room.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(directory()));
}

TEST_F(SpanSpoolTest, FilesThatAreNotSegmentsAreLeftAlone) {
  fs::create_directory(directory());
  AppendToFile(directory() / "segment-notanumber.spool", "x");
  AppendToFile(directory() / "README", "x");
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_TRUE(spool->empty());
  EXPECT_EQ(spool->counters().corrupt_records, 0U);
  EXPECT_TRUE(fs::exists(directory() / "segment-notanumber.spool"));
  EXPECT_TRUE(fs::exists(directory() / "README"));
}

}  // namespace
}  // namespace sparktrace::tracing::store
