#pragma once
// The thread that runs the trace view's handler, off the admin loop: an attempt of 90,000 spans takes
// a second to answer, and the loop must keep answering /healthz and /readyz meanwhile. One job runs at
// a time (the trace view's store connection and caches are not synchronised), in submission order.
// Submitting never blocks: when max_queued jobs already wait, the job is refused and the caller
// answers 503.
//
// Threads: TrySubmit from any thread; jobs run on the worker's own thread. The destructor lets the
// running job finish, drops the queued ones (never run) and joins.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace sparktrace::admin {

class UiWorker {
 public:
  explicit UiWorker(std::size_t max_queued);
  ~UiWorker();
  UiWorker(const UiWorker&) = delete;
  UiWorker& operator=(const UiWorker&) = delete;

  // False, and `job` dropped, when max_queued jobs wait (the running one not counted).
  bool TrySubmit(std::function<void()> job);

 private:
  void Run();

  const std::size_t max_queued_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it reads
};

}  // namespace sparktrace::admin
