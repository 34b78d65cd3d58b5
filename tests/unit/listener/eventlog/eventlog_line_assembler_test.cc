#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "listener/eventlog/line_assembler.h"

namespace sparktrace::listener::eventlog {
namespace {

struct Collected {
  std::vector<std::pair<std::string, std::uint64_t>> lines;
  LineAssembler::LineHandler Handler() {
    return [this](std::string_view line, std::uint64_t offset) {
      lines.emplace_back(std::string(line), offset);
    };
  }
};

TEST(EventLogLineAssembler, EmitsCompleteLinesWithOffsetsAndKeepsTheTail) {
  LineAssembler assembler(1024);
  Collected got;
  EXPECT_EQ(assembler.Append("ab\ncd\nef", got.Handler()), 0u);
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[0], std::make_pair(std::string("ab"), std::uint64_t{0}));
  EXPECT_EQ(got.lines[1], std::make_pair(std::string("cd"), std::uint64_t{3}));
  EXPECT_EQ(assembler.pending_bytes(), 2u);

  assembler.Append("g", got.Handler());
  assembler.Append("h\n\n", got.Handler());
  ASSERT_EQ(got.lines.size(), 4u);
  EXPECT_EQ(got.lines[2], std::make_pair(std::string("efgh"), std::uint64_t{6}));
  EXPECT_EQ(got.lines[3], std::make_pair(std::string(""), std::uint64_t{11}));
  EXPECT_EQ(assembler.pending_bytes(), 0u);
  EXPECT_EQ(assembler.decoded_offset(), 12u);
}

TEST(EventLogLineAssembler, ByteAtATimeGivesTheSameLines) {
  const std::string text = "{\"Event\":\"A\"}\n{\"Event\":\"BB\"}\nx\n";
  LineAssembler assembler(1024);
  Collected got;
  for (char byte : text) assembler.Append(std::string_view(&byte, 1), got.Handler());
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[1].first, "{\"Event\":\"BB\"}");
  EXPECT_EQ(got.lines[1].second, 14u);
  EXPECT_EQ(got.lines[2].first, "x");
}

TEST(EventLogLineAssembler, DropsOversizedLinesWithoutHoldingThem) {
  LineAssembler assembler(8);
  Collected got;
  // Exactly the bound is fine; one more byte is not, in one piece or spread over several.
  EXPECT_EQ(assembler.Append("12345678\n123456789\nok\n", got.Handler()), 1u);
  std::uint64_t oversized = 0;
  oversized += assembler.Append("abcdef", got.Handler());
  oversized += assembler.Append("ghij", got.Handler());  // 10 bytes now: dropped, skipping starts
  EXPECT_LE(assembler.pending_bytes(), 8u);
  oversized += assembler.Append(std::string(100000, 'z'), got.Handler());
  EXPECT_EQ(assembler.pending_bytes(), 0u);
  oversized += assembler.Append("zz\nafter\n", got.Handler());
  EXPECT_EQ(oversized, 1u);
  ASSERT_EQ(got.lines.size(), 3u);
  EXPECT_EQ(got.lines[0].first, "12345678");
  EXPECT_EQ(got.lines[1].first, "ok");
  EXPECT_EQ(got.lines[2].first, "after");
  // Offsets keep counting the dropped bytes.
  EXPECT_EQ(got.lines[2].second, 22u + 10u + 100000u + 3u);
}

TEST(EventLogLineAssembler, FinishHandsOverTheUnfinishedLine) {
  LineAssembler assembler(64);
  Collected got;
  assembler.Append("a\nlast-without-newline", got.Handler());
  assembler.Finish(got.Handler());
  ASSERT_EQ(got.lines.size(), 2u);
  EXPECT_EQ(got.lines[1], std::make_pair(std::string("last-without-newline"), std::uint64_t{2}));
  EXPECT_EQ(assembler.pending_bytes(), 0u);
  assembler.Finish(got.Handler());  // nothing left: nothing more
  EXPECT_EQ(got.lines.size(), 2u);
}

TEST(EventLogLineAssembler, FinishDoesNotHandOverALineBeingSkipped) {
  LineAssembler assembler(4);
  Collected got;
  EXPECT_EQ(assembler.Append("toolong", got.Handler()), 1u);
  assembler.Finish(got.Handler());
  EXPECT_TRUE(got.lines.empty());
}

}  // namespace
}  // namespace sparktrace::listener::eventlog
