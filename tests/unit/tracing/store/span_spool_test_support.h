#pragma once
// Shared by the SpanSpool tests: a temporary directory, numbered spans and batches, opening,
// appending and draining a spool, its segment files, and records framed as span_spool.h documents.

#include <gtest/gtest.h>
#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "tracing/store/spool/span_codec.h"
#include "tracing/store/spool/span_spool.h"

namespace sparktrace::tracing::store {
namespace fs = std::filesystem;

// Not inline: the test's own copy of the documented header size, not the spool's (spool_format.h).
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
inline Span NumberedSpan(std::uint32_t number, std::size_t padding) {
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
inline std::vector<Span> Batch(std::uint32_t number, std::size_t spans = 2, std::size_t padding = 100) {
  std::vector<Span> batch;
  for (std::uint32_t i = 0; i < spans; ++i) batch.push_back(NumberedSpan(number * 100 + i, padding));
  return batch;
}

inline std::uint32_t BatchNumber(const SpooledBatch& batch) {
  const std::int64_t* number = AttributeValueOf<std::int64_t>(batch.spans.at(0).attributes, "number");
  return number == nullptr ? 0 : static_cast<std::uint32_t>(*number / 100);
}

inline std::unique_ptr<SpanSpool> OpenOrDie(const SpanSpoolOptions& options) {
  Result<std::unique_ptr<SpanSpool>> spool = SpanSpool::Open(options);
  EXPECT_TRUE(spool.ok()) << spool.error().ToString();
  return spool.ok() ? std::move(spool).value() : nullptr;
}

inline void AppendOrDie(SpanSpool& spool, const std::vector<Span>& batch) {
  Result<void> appended = spool.Append(batch);
  ASSERT_TRUE(appended.ok()) << appended.error().ToString();
}

// Peeks and acknowledges up to `limit` batches, returning their numbers in the order delivered.
inline std::vector<std::uint32_t> Drain(SpanSpool& spool, std::size_t limit = 1'000'000) {
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

inline std::vector<std::uint32_t> Range(std::uint32_t first, std::uint32_t last) {
  std::vector<std::uint32_t> numbers;
  for (std::uint32_t n = first; n <= last; ++n) numbers.push_back(n);
  return numbers;
}

inline std::vector<fs::path> SegmentFiles(const fs::path& directory) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.path().filename().string().starts_with("segment-")) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::uint64_t RecordBytes(const std::vector<Span>& batch) {
  return kRecordHeaderBytes + EncodeSpans(batch).size();
}

// The bytes that Batch(first) .. Batch(last) take in the spool (their sizes differ with the numbers).
inline std::uint64_t RecordBytes(std::uint32_t first, std::uint32_t last) {
  std::uint64_t total = 0;
  for (std::uint32_t n = first; n <= last; ++n) total += RecordBytes(Batch(n));
  return total;
}

inline void AppendToFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << bytes;
}

// CRC32C, written out independently of the spool's, to check the documented record layout.
inline std::uint32_t ReferenceCrc32c(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFU;
  for (const char byte : bytes) {
    crc ^= static_cast<std::uint8_t>(byte);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78U & (0U - (crc & 1)));
  }
  return ~crc;
}

inline std::string LittleEndian32(std::uint32_t value) {
  std::string bytes(4, '\0');
  for (int i = 0; i < 4; ++i) bytes[i] = static_cast<char>(value >> (8 * i));
  return bytes;
}

// A record framed exactly as documented in span_spool.h.
inline std::string FramedRecord(const std::string& payload) {
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

}  // namespace sparktrace::tracing::store
