#pragma once
// Watches the upstream channel's connectivity: keeps it connected (an IDLE channel is asked to
// connect), counts failed connection attempts, and tells readiness whether the upstream can
// currently be reached. It runs on a proxy worker's completion queue rather than a thread of its
// own: a thread blocked in gRPC's WaitForStateChange would join the polling and steal network
// events from the workers.

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <grpcpp/channel.h>
#include <grpcpp/completion_queue.h>

#include "proxy/completion.h"

namespace sparktrace::proxy {

class UpstreamHealth final : public Completion {
 public:
  // `on_connect_failure` runs on the worker each time the channel enters TRANSIENT_FAILURE (a
  // connection attempt failed or the connection was lost).
  UpstreamHealth(std::string target, std::shared_ptr<grpc::Channel> channel, std::function<void()> on_connect_failure);

  // Starts watching on `queue`. The object must outlive the queue's draining.
  void Start(grpc::CompletionQueue* queue);
  // Stops re-arming the watch; the one outstanding watch completes within kWatchSlice.
  void Stop() { stopping_ = true; }

  // Thread-safe: true while the channel is READY.
  bool connected() const { return connected_.load(std::memory_order_relaxed); }

  void Complete(bool ok) override;

 private:
  void Watch();

  const std::string target_;  // for logs
  std::shared_ptr<grpc::Channel> channel_;
  std::function<void()> on_connect_failure_;
  grpc::CompletionQueue* queue_ = nullptr;
  grpc_connectivity_state last_ = GRPC_CHANNEL_IDLE;
  std::atomic<bool> connected_{false};
  std::atomic<bool> stopping_{false};
};

}  // namespace sparktrace::proxy
