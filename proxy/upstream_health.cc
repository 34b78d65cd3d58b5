#include "proxy/upstream_health.h"

#include <chrono>

#include <spdlog/spdlog.h>

namespace sparktrace::proxy {
namespace {

const char* StateName(grpc_connectivity_state state) {
  switch (state) {
    case GRPC_CHANNEL_IDLE:
      return "IDLE";
    case GRPC_CHANNEL_CONNECTING:
      return "CONNECTING";
    case GRPC_CHANNEL_READY:
      return "READY";
    case GRPC_CHANNEL_TRANSIENT_FAILURE:
      return "TRANSIENT_FAILURE";
    case GRPC_CHANNEL_SHUTDOWN:
      return "SHUTDOWN";
  }
  return "UNKNOWN";
}

// A watch cannot be cancelled, so shutdown waits for the outstanding one: keep it short.
constexpr auto kWatchSlice = std::chrono::milliseconds(250);

}  // namespace

UpstreamHealth::UpstreamHealth(std::string target, std::shared_ptr<grpc::Channel> channel,
                               std::function<void()> on_connect_failure)
    : target_(std::move(target)), channel_(std::move(channel)), on_connect_failure_(std::move(on_connect_failure)) {}

void UpstreamHealth::Start(grpc::CompletionQueue* queue) {
  queue_ = queue;
  last_ = channel_->GetState(/*try_to_connect=*/true);
  connected_ = last_ == GRPC_CHANNEL_READY;
  Watch();
}

void UpstreamHealth::Watch() {
  channel_->NotifyOnStateChange(last_, std::chrono::system_clock::now() + kWatchSlice, queue_,
                                static_cast<Completion*>(this));
}

void UpstreamHealth::Complete(bool changed) {
  if (changed) {
    // Asking to connect from IDLE keeps the upstream connection warm and readiness truthful.
    const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    if (state != last_) {
      spdlog::debug("upstream channel {} -> {}", StateName(last_), StateName(state));
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
        spdlog::warn("upstream {} cannot be reached (connection failed or lost)", target_);
        on_connect_failure_();
      } else if (state == GRPC_CHANNEL_READY && last_ == GRPC_CHANNEL_TRANSIENT_FAILURE) {
        spdlog::info("upstream {} connected again", target_);
      }
      connected_ = state == GRPC_CHANNEL_READY;
      last_ = state;
    }
  }
  if (!stopping_) Watch();
}

}  // namespace sparktrace::proxy
