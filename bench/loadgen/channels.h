// Client channels: identical settings for every leg, one TCP connection per channel.
#pragma once

#include <grpcpp/channel.h>

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

}  // namespace sparktrace::loadgen
