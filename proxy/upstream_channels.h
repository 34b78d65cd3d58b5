#pragma once
// Channels to the single upstream Spark Connect server.
//
// gRPC C++ always writes its own `user-agent` header, so the client's value would be lost. The
// only per-call-free way to make the upstream see it is the channel's primary user agent, so we
// keep one channel per distinct client user agent (there are few: one per client library
// version). The upstream then sees "<client's user agent> grpc-c++/1.51.1 …". Beyond
// kMaxUserAgents distinct values, calls use the default channel (user agent "sparktrace/<ver>").

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <grpcpp/channel.h>

namespace sparktrace::proxy {

struct UpstreamOptions {
  std::string target;  // "host:port"
  bool tls = false;
  std::string ca_pem;  // root certificates for TLS; empty = system roots
  std::uint64_t max_message_bytes = 256ULL << 20;
};

class UpstreamChannels {
 public:
  static constexpr std::size_t kMaxUserAgents = 64;

  explicit UpstreamChannels(UpstreamOptions options);

  // Thread-safe; creating a channel does not connect (connection happens on first use).
  std::shared_ptr<grpc::Channel> ForUserAgent(std::string_view user_agent);
  const std::shared_ptr<grpc::Channel>& default_channel() const { return default_channel_; }
  const std::string& target() const { return options_.target; }

 private:
  std::shared_ptr<grpc::Channel> Create(const std::string& primary_user_agent) const;

  const UpstreamOptions options_;
  const std::shared_ptr<grpc::Channel> default_channel_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<grpc::Channel>, std::less<>> by_user_agent_;
};

// "sparktrace/0.1.0".
std::string ProxyUserAgent();

}  // namespace sparktrace::proxy
