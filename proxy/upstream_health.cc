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

// How long one wait for a state change may block, which bounds how late a stop request is seen.
constexpr auto kWaitSlice = std::chrono::milliseconds(200);

}  // namespace

UpstreamHealth::UpstreamHealth(std::string target, std::shared_ptr<grpc::Channel> channel,
                               std::function<void()> on_connect_failure)
    : target_(std::move(target)),
      channel_(std::move(channel)), on_connect_failure_(std::move(on_connect_failure)) {
  watcher_ = std::thread([this] { Watch(); });
}

UpstreamHealth::~UpstreamHealth() {
  stopping_ = true;
  watcher_.join();
}

void UpstreamHealth::Watch() {
  grpc_connectivity_state last = channel_->GetState(/*try_to_connect=*/true);
  connected_ = last == GRPC_CHANNEL_READY;
  while (!stopping_) {
    const auto deadline = std::chrono::system_clock::now() + kWaitSlice;
    if (!channel_->WaitForStateChange(last, deadline)) {
      continue;  // no change within the slice; check for stop
    }
    // Asking to connect from IDLE keeps the upstream connection warm and readiness truthful.
    const grpc_connectivity_state state = channel_->GetState(/*try_to_connect=*/true);
    if (state == last) continue;
    spdlog::debug("upstream channel {} -> {}", StateName(last), StateName(state));
    if (state == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      spdlog::warn("upstream {} cannot be reached (connection failed or lost)", target_);
      on_connect_failure_();
    } else if (state == GRPC_CHANNEL_READY && last == GRPC_CHANNEL_TRANSIENT_FAILURE) {
      spdlog::info("upstream {} connected again", target_);
    }
    connected_ = state == GRPC_CHANNEL_READY;
    last = state;
  }
}

}  // namespace sparktrace::proxy
