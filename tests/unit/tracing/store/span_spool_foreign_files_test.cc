// SpanSpool and files it did not make: a symbolic link or a directory named like a segment is left
// alone (never opened, truncated or removed), counted, and its name never reused.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "tests/unit/tracing/store/span_spool_test_support.h"
#include "tracing/store/spool/span_spool.h"

namespace sparktrace::tracing::store {
namespace {

std::string ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(SpanSpoolTest, LinksAndOtherFilesNamedLikeSegmentsAreLeftAlone) {
  // What the probe planted: a link to a file elsewhere, whose bytes are no spool record; recovery
  // used to open it read-write and cut it to 0 bytes at its "first bad record".
  const fs::path elsewhere = temp_.path() / "someone-elses.log";
  const std::string precious(3893, 'x');
  {
    std::ofstream out(elsewhere, std::ios::binary);
    out << precious;
  }
  fs::create_directories(directory());
  const fs::path link = directory() / "segment-00000000000000000001.spool";
  fs::create_symlink(elsewhere, link);
  fs::create_directory(directory() / "segment-00000000000000000002.spool");

  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().refused_files, 2U);
  EXPECT_EQ(spool->batches(), 0U);
  EXPECT_EQ(ReadWhole(elsewhere), precious);

  // The spool works around them: its own segments take names after theirs.
  AppendOrDie(*spool, Batch(1));
  AppendOrDie(*spool, Batch(2));
  EXPECT_EQ(Drain(*spool), Range(1, 2));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(ReadWhole(elsewhere), precious);
}

TEST_F(SpanSpoolTest, ReopeningNeverFollowsALinkThatReplacedASegment) {
  const fs::path elsewhere = temp_.path() / "target.bin";
  {
    std::ofstream out(elsewhere, std::ios::binary);
    out << "not a spool record";
  }
  fs::path segment;
  {
    std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
    ASSERT_NE(spool, nullptr);
    AppendOrDie(*spool, Batch(1));
    ASSERT_EQ(SegmentFiles(directory()).size(), 1U);
    segment = SegmentFiles(directory()).front();
  }
  // Swapped for a link between two runs: the next run leaves it, and its target, as they are.
  fs::remove(segment);
  fs::create_symlink(elsewhere, segment);
  std::unique_ptr<SpanSpool> spool = OpenOrDie(Options());
  ASSERT_NE(spool, nullptr);
  EXPECT_EQ(spool->counters().refused_files, 1U);
  EXPECT_EQ(ReadWhole(elsewhere), "not a spool record");
  AppendOrDie(*spool, Batch(2));
  EXPECT_EQ(Drain(*spool), Range(2, 2));
}

}  // namespace
}  // namespace sparktrace::tracing::store
