#include "common/memory_trimmer.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace sparktrace {
namespace {

std::size_t ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  std::size_t kib = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

constexpr std::size_t kMiB = 1 << 20;
// An interval long enough that the background thread never runs during a test.
constexpr std::chrono::hours kNever{24};

TEST(MemoryTrimmer, ReturnsFreedArenaMemoryToTheKernel) {
#ifdef __SANITIZE_ADDRESS__
  GTEST_SKIP() << "AddressSanitizer replaces glibc's allocator, whose arenas this test measures";
#endif
  MemoryTrimmer trimmer(kNever, 16 * kMiB);
  // Many 64 KiB blocks (below malloc's mmap threshold, so they live in the arena), written to
  // so they are resident; the last one stays allocated so the heap top cannot shrink by itself.
  std::vector<std::unique_ptr<char[]>> blocks;
  for (int i = 0; i < 2000; ++i) {
    blocks.push_back(std::make_unique<char[]>(64 * 1024));
    std::memset(blocks.back().get(), 1, 64 * 1024);
  }
  auto pin = std::move(blocks.back());
  blocks.pop_back();
  blocks.clear();
  const std::size_t before = ResidentBytes();
  ASSERT_TRUE(trimmer.TrimIfWorthIt());
  const std::size_t after = ResidentBytes();
  EXPECT_GT(before, after + 64 * kMiB) << "before " << before / kMiB << " MiB, after " << after / kMiB << " MiB";
}

TEST(MemoryTrimmer, LeavesSmallAmountsAlone) {
  MemoryTrimmer trimmer(kNever, std::size_t{1} << 40);
  EXPECT_FALSE(trimmer.TrimIfWorthIt());
}

}  // namespace
}  // namespace sparktrace
