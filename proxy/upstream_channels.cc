#include "proxy/upstream_channels.h"

#include <climits>

#include <grpc/grpc.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

namespace sparktrace::proxy {
namespace {

int ClampToInt(std::uint64_t value) { return value > INT_MAX ? INT_MAX : static_cast<int>(value); }

}  // namespace

std::string ProxyUserAgent() { return "sparktrace/0.1.0"; }

UpstreamChannels::UpstreamChannels(UpstreamOptions options)
    : options_(std::move(options)), default_channel_(Create(ProxyUserAgent())) {}

std::shared_ptr<grpc::Channel> UpstreamChannels::ForUserAgent(std::string_view user_agent) {
  if (user_agent.empty()) return default_channel_;
  std::lock_guard lock(mu_);
  if (auto it = by_user_agent_.find(user_agent); it != by_user_agent_.end()) return it->second;
  if (by_user_agent_.size() >= kMaxUserAgents) return default_channel_;
  auto channel = Create(std::string(user_agent));
  by_user_agent_.emplace(std::string(user_agent), channel);
  return channel;
}

std::shared_ptr<grpc::Channel> UpstreamChannels::Create(const std::string& primary_user_agent) const {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(ClampToInt(options_.max_message_bytes));
  args.SetMaxSendMessageSize(ClampToInt(options_.max_message_bytes));
  // Goes in front of gRPC's own "grpc-c++/1.51.1"; setting the raw channel arg would land behind it.
  args.SetUserAgentPrefix(primary_user_agent);
  // The client retries by itself (PySpark: 15 times with backoff); retrying here as well would
  // change its behaviour and make gRPC keep a copy of every request for replay.
  args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // gRPC's default backoff grows to 120 s; a restarted Spark driver should be usable in seconds.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 500);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options_.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.ca_pem;
    credentials = grpc::SslCredentials(ssl);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  return grpc::CreateCustomChannel(options_.target, credentials, args);
}

}  // namespace sparktrace::proxy
