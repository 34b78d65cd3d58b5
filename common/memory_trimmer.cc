#include "common/memory_trimmer.h"

#include <malloc.h>

namespace sparktrace {

MemoryTrimmer::MemoryTrimmer(std::chrono::milliseconds interval, std::size_t min_free_bytes)
    : interval_(interval), min_free_bytes_(min_free_bytes), thread_([this] { Run(); }) {}

MemoryTrimmer::~MemoryTrimmer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

bool MemoryTrimmer::TrimIfWorthIt() const {
  // fordblks: bytes in free chunks, summed over all arenas.
  if (mallinfo2().fordblks < min_free_bytes_) return false;
  malloc_trim(0);
  return true;
}

void MemoryTrimmer::Run() {
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    TrimIfWorthIt();
    lock.lock();
  }
}

}  // namespace sparktrace
