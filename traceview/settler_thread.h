#pragma once
// Runs the settler's passes (attempt_settler.h) on a thread of its own, every interval, over a store
// connection of its own that it opens (as a writer) on its first pass and again after an error: never
// on a relay worker or the admin server's loops, and a slow store delays only the next pass.
//
// Threads: the constructor starts the thread; the destructor stops it, after the pass in progress
// (at most max_per_pass attempts), and joins it.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "common/result.h"
#include "traceview/attempt_settler.h"
#include "tracing/store/span_store.h"

namespace sparktrace::traceview {

class SettlerThread {
 public:
  using StoreOpener = std::function<Result<std::unique_ptr<tracing::store::SpanStore>>()>;

  // `options.interval` must be positive.
  SettlerThread(SettlerOptions options, std::shared_ptr<SettlerMetrics> metrics, StoreOpener open_store);
  ~SettlerThread();
  SettlerThread(const SettlerThread&) = delete;
  SettlerThread& operator=(const SettlerThread&) = delete;

 private:
  void Run();

  AttemptSettler settler_;
  const std::shared_ptr<SettlerMetrics> metrics_;
  const StoreOpener open_store_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: started once everything it uses exists
};

}  // namespace sparktrace::traceview
