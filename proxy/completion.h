#pragma once

namespace sparktrace::proxy {

// What a completion-queue tag of ours points to. Complete runs on the worker thread that drains
// the queue the operation was started on; it must not block.
class Completion {
 public:
  virtual void Complete(bool ok) = 0;

 protected:
  ~Completion() = default;
};

}  // namespace sparktrace::proxy
