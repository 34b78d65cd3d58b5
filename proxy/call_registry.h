#pragma once
// The calls one relay worker is forwarding, and how many are live across all workers (what the
// drain waits for).

#include <atomic>
#include <condition_variable>
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace sparktrace::proxy {

class RelayContext;
class RelayedCall;

// Shared by all workers: the drain waits on it from the main thread. Counting is an atomic, not
// a lock every worker takes twice per call; the lock is only taken when the count reaches zero.
class LiveCalls {
 public:
  void Add() { live_.fetch_add(1, std::memory_order_relaxed); }
  void Remove() {
    if (live_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      const std::lock_guard lock(mu_);  // a waiter between its check and its wait must not miss this
      none_.notify_all();
    }
  }
  // True when no call is live, false at the deadline.
  bool WaitForNone(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    return none_.wait_until(lock, deadline, [this] { return live_.load(std::memory_order_acquire) == 0; });
  }

 private:
  std::atomic<long> live_{0};
  std::mutex mu_;
  std::condition_variable none_;
};

class CallRegistry {
 public:
  CallRegistry(RelayContext& context, LiveCalls& live) : context_(context), live_(live) {}
  ~CallRegistry();
  CallRegistry(const CallRegistry&) = delete;
  CallRegistry& operator=(const CallRegistry&) = delete;

  RelayedCall& Add(std::unique_ptr<RelayedCall> call);
  // The call is over: it is freed after the current event.
  void Finished(RelayedCall& call);
  void CancelAll();
  std::size_t size() const { return calls_.size(); }

 private:
  RelayContext& context_;
  LiveCalls& live_;
  std::unordered_map<RelayedCall*, std::unique_ptr<RelayedCall>> calls_;
};

}  // namespace sparktrace::proxy
