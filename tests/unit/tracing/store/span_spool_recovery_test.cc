// SpanSpool recovery: reopening after acknowledgements and crashes, stale cursors, torn and corrupt records.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/unit/tracing/store/span_spool_test_support.h"
#include "tracing/store/spool/span_codec.h"
#include "tracing/store/spool/span_spool.h"

namespace sparktrace::tracing::store {
namespace {

void OverwriteByte(const fs::path& path, std::uint64_t offset, char value) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(value);
}

TEST_F(SpanSpoolTest, ReopenResumesAfterTheAcknowledgedBatches) {
  const std::uint64_t record = RecordBytes(Batch(1));
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 4));
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 10; ++n) AppendOrDie(*spool, Batch(n));
    EXPECT_EQ(Drain(*spool, 3), Range(1, 3));
  }  // a clean close persists the cursor
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 4));
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().recovered_batches, 7U);
  EXPECT_EQ(spool->batches(), 7U);
  EXPECT_EQ(spool->bytes(), RecordBytes(4, 10));
  // Appends go after the recovered batches, in a new segment.
  AppendOrDie(*spool, Batch(11));
  EXPECT_EQ(Drain(*spool), Range(4, 11));
  EXPECT_TRUE(SegmentFiles(directory()).empty());
}

// A crash is simulated by copying the directory while the spool is open: the copy is what a killed
// process leaves (no destructor ran, the cursor file is as lazily last written).
TEST_F(SpanSpoolTest, AfterACrashNothingUnacknowledgedIsLost) {
  const fs::path crashed = temp_.path() / "crashed";
  const std::uint32_t acknowledged = SpanSpool::kAcknowledgementsPerCursorWrite + 6;
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/64 << 10));
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 100; ++n) AppendOrDie(*spool, Batch(n, 1, 10));
    EXPECT_EQ(Drain(*spool, acknowledged), Range(1, acknowledged));
    fs::copy(directory(), crashed);
  }
  SpanSpoolOptions options = Options();
  options.directory = crashed;
  std::unique_ptr<SpanSpool> spool = OpenOrDie(options);
  ASSERT_NE(spool, nullptr);
  // The cursor was last written at the 64th acknowledgement: the 6 after it come again, then the rest.
  const std::uint32_t first = SpanSpool::kAcknowledgementsPerCursorWrite + 1;
  EXPECT_EQ(spool->counters().recovered_batches, 100 - first + 1);
  EXPECT_EQ(Drain(*spool), Range(first, 100));
}

// After a crash the cursor file can name a segment that is gone. A new segment must not take that
// segment's sequence, or the old cursor offset would hide its first batches.
TEST_F(SpanSpoolTest, SequencesAreNotReusedUnderAnOutdatedCursor) {
  const fs::path crashed = temp_.path() / "crashed";
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 3; ++n) AppendOrDie(*spool, Batch(n));
    EXPECT_EQ(Drain(*spool, 2), Range(1, 2));
  }  // cursor: segment 1, after batch 2
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    EXPECT_EQ(Drain(*spool), Range(3, 3));
    EXPECT_TRUE(SegmentFiles(directory()).empty());
    fs::copy(directory(), crashed);  // the cursor file still names segment 1
  }
  SpanSpoolOptions options = Options();
  options.directory = crashed;
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(options);
    ASSERT_NE(spool, nullptr);
    EXPECT_TRUE(spool->empty());
    for (std::uint32_t n = 4; n <= 6; ++n) AppendOrDie(*spool, Batch(n));
  }
  std::unique_ptr<SpanSpool> spool = OpenOrDie(options);
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().recovered_batches, 3U);
  EXPECT_EQ(Drain(*spool), Range(4, 6));
}

// A segment the cursor has passed, whose deletion did not happen (the process died first), is
// deleted at Open() and not delivered again.
TEST_F(SpanSpoolTest, SegmentBehindTheCursorIsDeletedAtOpen) {
  const std::uint64_t record = RecordBytes(Batch(1));
  const fs::path saved = temp_.path() / "saved-segment";
  fs::path first_segment;
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 2));
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 4; ++n) AppendOrDie(*spool, Batch(n));
    first_segment = SegmentFiles(directory()).at(0);
    fs::copy_file(first_segment, saved);
    EXPECT_EQ(Drain(*spool, 3), Range(1, 3));
  }  // cursor: the second segment, after batch 3
  fs::copy_file(saved, first_segment);
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 2));
  ASSERT_NE(spool, nullptr);
  EXPECT_FALSE(fs::exists(first_segment));
  EXPECT_EQ(spool->counters().recovered_batches, 1U);
  EXPECT_EQ(spool->bytes(), record);
  EXPECT_EQ(Drain(*spool), Range(4, 4));
}

TEST_F(SpanSpoolTest, CorruptCursorMeansDeliveringAgain) {
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 4; ++n) AppendOrDie(*spool, Batch(n));
    EXPECT_EQ(Drain(*spool, 2), Range(1, 2));
  }
  ASSERT_TRUE(fs::exists(directory() / "cursor"));
  OverwriteByte(directory() / "cursor", 12, '\x07');
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(Drain(*spool), Range(1, 4));
}

TEST_F(SpanSpoolTest, TornTailIsTruncatedAndCounted) {
  const std::uint64_t record = RecordBytes(Batch(1));
  for (const std::uint64_t cut : {std::uint64_t{1}, record / 2, record - kRecordHeaderBytes + 3}) {
    SCOPED_TRACE(cut);
    fs::remove_all(directory());
    {
      std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
      ASSERT_NE(spool, nullptr);
      for (std::uint32_t n = 1; n <= 5; ++n) AppendOrDie(*spool, Batch(n));
    }
    const fs::path segment = SegmentFiles(directory()).at(0);
    fs::resize_file(segment, 5 * record - cut);  // a crash in the middle of writing the 5th record
    {
      std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
      ASSERT_NE(spool, nullptr);
      const SpanSpoolCounters counters = spool->counters();
      EXPECT_EQ(counters.corrupt_records, 1U);
      EXPECT_EQ(counters.corrupt_bytes, record - cut);
      EXPECT_EQ(counters.recovered_batches, 4U);
      EXPECT_EQ(fs::file_size(segment), 4 * record);
      AppendOrDie(*spool, Batch(6));
    }
    // The truncation stuck: nothing is counted twice, and what was appended since is there.
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    EXPECT_EQ(spool->counters().corrupt_records, 0U);
    EXPECT_EQ(Drain(*spool), (std::vector<std::uint32_t>{1, 2, 3, 4, 6}));
  }
}

TEST_F(SpanSpoolTest, GarbageAfterTheLastRecordIsCutOff) {
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 3; ++n) AppendOrDie(*spool, Batch(n));
  }
  const fs::path segment = SegmentFiles(directory()).at(0);
  const std::uint64_t good_size = fs::file_size(segment);
  AppendToFile(segment, std::string(100, 'x'));
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().corrupt_records, 1U);
  EXPECT_EQ(spool->counters().corrupt_bytes, 100U);
  EXPECT_EQ(fs::file_size(segment), good_size);
  EXPECT_EQ(Drain(*spool), Range(1, 3));
}

TEST_F(SpanSpoolTest, ZeroFilledTailIsCutOff) {
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    AppendOrDie(*spool, Batch(1));
  }
  // What a power loss can leave: the file grew but the data never reached the disk.
  AppendToFile(SegmentFiles(directory()).at(0), std::string(4096, '\0'));
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().corrupt_records, 1U);
  EXPECT_EQ(Drain(*spool), Range(1, 1));
}

TEST_F(SpanSpoolTest, CorruptRecordInTheMiddleDropsTheRestOfItsSegmentOnly) {
  const std::uint64_t record = RecordBytes(Batch(1));
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 3));
    ASSERT_NE(spool, nullptr);
    for (std::uint32_t n = 1; n <= 6; ++n) AppendOrDie(*spool, Batch(n));
  }
  const std::vector<fs::path> segments = SegmentFiles(directory());
  ASSERT_EQ(segments.size(), 2U);
  OverwriteByte(segments[0], record + kRecordHeaderBytes + 40, '!');  // in the 2nd record's payload
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 3));
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().corrupt_records, 1U);
  EXPECT_EQ(spool->counters().corrupt_bytes, 2 * record);
  EXPECT_EQ(spool->counters().recovered_batches, 4U);
  EXPECT_EQ(Drain(*spool), (std::vector<std::uint32_t>{1, 4, 5, 6}));
}

TEST_F(SpanSpoolTest, CorruptionFoundByPeekIsSkippedAndCounted) {
  const std::uint64_t record = RecordBytes(Batch(1));
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options(/*segment_bytes=*/record * 2));
  ASSERT_NE(spool, nullptr);
  for (std::uint32_t n = 1; n <= 4; ++n) AppendOrDie(*spool, Batch(n));
  OverwriteByte(SegmentFiles(directory()).at(0), 2, '?');  // the 1st record's magic, behind the spool's back
  EXPECT_EQ(Drain(*spool), Range(3, 4));
  EXPECT_EQ(spool->counters().corrupt_records, 1U);
  EXPECT_EQ(spool->counters().corrupt_bytes, 2 * record);
  EXPECT_TRUE(spool->empty());
  EXPECT_EQ(spool->bytes(), 0U);
  EXPECT_TRUE(SegmentFiles(directory()).empty());
}

TEST_F(SpanSpoolTest, IntactRecordThatDoesNotDecodeIsSkippedAlone) {
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    AppendOrDie(*spool, Batch(1));
  }
  const std::string future_payload = "\x02 from a newer build";
  AppendToFile(SegmentFiles(directory()).at(0), FramedRecord(future_payload));
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    EXPECT_EQ(spool->counters().corrupt_records, 0U);  // framing and checksums are fine
    EXPECT_EQ(spool->batches(), 2U);
    AppendOrDie(*spool, Batch(2));
    EXPECT_EQ(Drain(*spool), Range(1, 2));
    EXPECT_EQ(spool->counters().corrupt_records, 1U);
    EXPECT_EQ(spool->counters().corrupt_bytes, kRecordHeaderBytes + future_payload.size());
    EXPECT_EQ(spool->counters().drained_batches, 2U);
  }
}

}  // namespace
}  // namespace sparktrace::tracing::store
