#pragma once
// Work handed to an event loop's thread from other threads (the trace view's answers, computed on the
// UI worker): queued under a lock and run on the loop, in order, by one libevent event made active.
//
// Threads: Post from any thread; tasks run on the loop's thread. The event_base must outlive the
// mailbox and have libevent's pthread support on (evthread_use_pthreads before it was created).
// Tasks still queued when the mailbox is destroyed are dropped, never run.

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "common/libevent_handles.h"
#include "common/result.h"

namespace sparktrace::admin {

class LoopMailbox {
 public:
  static Result<std::unique_ptr<LoopMailbox>> Create(event_base* base);
  LoopMailbox(const LoopMailbox&) = delete;
  LoopMailbox& operator=(const LoopMailbox&) = delete;

  void Post(std::function<void()> task);

 private:
  LoopMailbox() = default;
  static void OnWake(evutil_socket_t, short, void* self);

  std::mutex mu_;
  std::vector<std::function<void()>> tasks_;
  EventPtr wake_;
};

}  // namespace sparktrace::admin
