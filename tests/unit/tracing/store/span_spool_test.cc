#include "tracing/store/span_spool.h"

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "tracing/store/span_codec.h"

namespace sparktrace::tracing::store {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kRecordHeaderBytes = 16;

// A fresh directory per test, removed with everything in it afterwards.
class TempDirectory {
 public:
  TempDirectory() {
    std::string pattern = (fs::temp_directory_path() / "span_spool_test.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDirectory() {
    std::error_code error;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, error);
    fs::remove_all(path_, error);
  }
  TempDirectory(const TempDirectory&) = delete;
  TempDirectory& operator=(const TempDirectory&) = delete;

  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// The span whose span id and name carry `number`, so that order and identity can be checked.
Span NumberedSpan(std::uint32_t number, std::size_t padding) {
  Span span;
  span.trace_id[0] = 0xab;
  span.trace_id[15] = 1;
  for (int i = 0; i < 4; ++i) span.span_id[7 - i] = static_cast<std::uint8_t>(number >> (8 * i));
  span.name = "span-" + std::to_string(number);
  span.start_time_unix_nano = 1'714'564'800'000'000'000ULL + number;
  span.end_time_unix_nano = span.start_time_unix_nano + 1;
  span.attributes = {{"padding", std::string(padding, 'p')}, {"number", std::int64_t{number}}};
  return span;
}

// Batch `number` holds spans 100*number .. 100*number + spans - 1.
std::vector<Span> Batch(std::uint32_t number, std::size_t spans = 2, std::size_t padding = 100) {
  std::vector<Span> batch;
  for (std::uint32_t i = 0; i < spans; ++i) batch.push_back(NumberedSpan(number * 100 + i, padding));
  return batch;
}

std::uint32_t BatchNumber(const SpooledBatch& batch) {
  const std::int64_t* number = AttributeValueOf<std::int64_t>(batch.spans.at(0).attributes, "number");
  return number == nullptr ? 0 : static_cast<std::uint32_t>(*number / 100);
}

std::unique_ptr<SpanSpool> OpenOrDie(const SpanSpoolOptions& options) {
  Result<std::unique_ptr<SpanSpool>> spool = SpanSpool::Open(options);
  EXPECT_TRUE(spool.ok()) << spool.error().ToString();
  return spool.ok() ? std::move(spool).value() : nullptr;
}

void AppendOrDie(SpanSpool& spool, const std::vector<Span>& batch) {
  Result<void> appended = spool.Append(batch);
  ASSERT_TRUE(appended.ok()) << appended.error().ToString();
}

// Peeks and acknowledges up to `limit` batches, returning their numbers in the order delivered.
std::vector<std::uint32_t> Drain(SpanSpool& spool, std::size_t limit = 1'000'000) {
  std::vector<std::uint32_t> numbers;
  while (numbers.size() < limit) {
    Result<std::optional<SpooledBatch>> batch = spool.Peek();
    EXPECT_TRUE(batch.ok()) << batch.error().ToString();
    if (!batch.ok() || !batch->has_value()) break;
    numbers.push_back(BatchNumber(**batch));
    Result<void> acknowledged = spool.Acknowledge(**batch);
    EXPECT_TRUE(acknowledged.ok()) << acknowledged.error().ToString();
  }
  return numbers;
}

std::vector<std::uint32_t> Range(std::uint32_t first, std::uint32_t last) {
  std::vector<std::uint32_t> numbers;
  for (std::uint32_t n = first; n <= last; ++n) numbers.push_back(n);
  return numbers;
}

std::vector<fs::path> SegmentFiles(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().filename().string().starts_with("segment-")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::uint64_t SegmentBytes(const fs::path& directory) {
  std::uint64_t total = 0;
  for (const fs::path& file : SegmentFiles(directory)) total += fs::file_size(file);
  return total;
}

std::uint64_t RecordBytes(const std::vector<Span>& batch) {
  return kRecordHeaderBytes + EncodeSpans(batch).size();
}

// The bytes that Batch(first) .. Batch(last) take in the spool (their sizes differ with the numbers).
std::uint64_t RecordBytes(std::uint32_t first, std::uint32_t last) {
  std::uint64_t total = 0;
  for (std::uint32_t n = first; n <= last; ++n) total += RecordBytes(Batch(n));
  return total;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void AppendToFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

void OverwriteByte(const fs::path& path, std::uint64_t offset, char value) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(value);
}

// CRC32C, written out independently of the spool's, to check the documented record layout.
std::uint32_t ReferenceCrc32c(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const char byte : bytes) {
    crc ^= static_cast<std::uint8_t>(byte);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78U & (0U - (crc & 1)));
  }
  return ~crc;
}

std::string LittleEndian32(std::uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  return bytes;
}

// A record framed exactly as documented in span_spool.h.
std::string FramedRecord(const std::string& payload) {
  std::string header = "STS1" + LittleEndian32(static_cast<std::uint32_t>(payload.size())) +
                       LittleEndian32(ReferenceCrc32c(payload));
  return header + LittleEndian32(ReferenceCrc32c(header)) + payload;
}

class SpanSpoolTest : public ::testing::Test {
 protected:
  SpanSpoolOptions Options(std::uint64_t segment_bytes = 16 << 20, std::uint64_t max_bytes = 1 << 30) const {
    return SpanSpoolOptions{
        .directory = temp_.path() / "spool", .max_bytes = max_bytes, .segment_bytes = segment_bytes};
  }
  fs::path directory() const { return temp_.path() / "spool"; }

  TempDirectory temp_;
};

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
