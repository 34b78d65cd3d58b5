#pragma once
// Watches the upstream channel's connectivity on its own thread: keeps it connected (an IDLE
// channel is asked to connect), counts failed connection attempts, and tells readiness whether
// the upstream can currently be reached.

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <grpcpp/channel.h>

namespace sparktrace::proxy {

class UpstreamHealth {
 public:
  // `on_connect_failure` runs on the watcher thread each time the channel enters
  // TRANSIENT_FAILURE (a connection attempt failed or the connection was lost).
  UpstreamHealth(std::string target, std::shared_ptr<grpc::Channel> channel,
                 std::function<void()> on_connect_failure);
  ~UpstreamHealth();  // stops and joins the watcher
  UpstreamHealth(const UpstreamHealth&) = delete;
  UpstreamHealth& operator=(const UpstreamHealth&) = delete;

  // Thread-safe: true while the channel is READY.
  bool connected() const { return connected_.load(std::memory_order_relaxed); }

 private:
  void Watch();

  const std::string target_;  // for logs
  std::shared_ptr<grpc::Channel> channel_;
  std::function<void()> on_connect_failure_;
  std::atomic<bool> connected_{false};
  std::atomic<bool> stopping_{false};
  std::thread watcher_;
};

}  // namespace sparktrace::proxy
