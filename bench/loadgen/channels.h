// Client channels: identical settings for every leg, one TCP connection per channel.
#pragma once

#include <grpcpp/channel.h>
#include <grpcpp/generic/generic_stub.h>

#include <memory>
#include <string>
#include <vector>

namespace sparktrace::loadgen {

// Opens `count` channels to `target`, each on its own connection (local subchannel pool),
// message size limits off, retries off, and waits up to `connect_timeout_s` for each to connect.
// Returns an empty vector and fills *error on failure.
std::vector<std::shared_ptr<grpc::Channel>> ConnectChannels(const std::string& target, int count,
                                                            double connect_timeout_s,
                                                            std::string* error);

struct ClientOptions;

// One generic stub per channel, ChannelCount(options) channels to options.target, connected.
// On failure prints the client's JSON error line for `mode` and returns an empty vector.
std::vector<std::unique_ptr<grpc::GenericStub>> ConnectStubs(const ClientOptions& options, const char* mode);

}  // namespace sparktrace::loadgen
