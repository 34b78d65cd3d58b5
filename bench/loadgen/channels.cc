#include "channels.h"

#include "flags.h"
#include "stats.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>

#include <chrono>

namespace sparktrace::loadgen {

std::vector<std::shared_ptr<grpc::Channel>> ConnectChannels(const std::string& target, int count,
                                                            double connect_timeout_s,
                                                            std::string* error) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  channels.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    // Without a local pool, channels with equal arguments share one subchannel and so one
    // connection; the benchmark wants N streams spread over real connections.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    channels.push_back(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }
  auto deadline = std::chrono::system_clock::now() +
                  std::chrono::milliseconds(static_cast<std::int64_t>(connect_timeout_s * 1000));
  for (int i = 0; i < count; ++i) {
    if (!channels[static_cast<std::size_t>(i)]->WaitForConnected(deadline)) {
      *error = "channel " + std::to_string(i) + " to " + target + " did not connect in time";
      return {};
    }
  }
  return channels;
}

std::vector<std::unique_ptr<grpc::GenericStub>> ConnectStubs(const ClientOptions& options, const char* mode) {
  std::string error;
  auto channels = ConnectChannels(options.target, ChannelCount(options), options.connect_timeout_s, &error);
  std::vector<std::unique_ptr<grpc::GenericStub>> stubs;
  if (channels.empty()) {
    JsonLine().Add("mode", mode).Add("error", error).Print();
    return stubs;
  }
  for (auto& channel : channels) stubs.push_back(std::make_unique<grpc::GenericStub>(channel));
  return stubs;
}

}  // namespace sparktrace::loadgen
