// Wire contract between the loadgen client and server: method names and stream parameters.
#pragma once

#include <cstdint>

namespace sparktrace::loadgen {

inline constexpr char kUnaryMethod[] = "/bench.Load/Unary";
inline constexpr char kStreamMethod[] = "/bench.Load/Stream";
inline constexpr char kIdleMethod[] = "/bench.Load/Idle";

// Stream parameters travel as request metadata; the request payload carries the same values as
// ASCII "MESSAGES MESSAGE_BYTES" for peers that drop custom metadata.
inline constexpr char kMessagesKey[] = "x-bench-messages";
inline constexpr char kMessageBytesKey[] = "x-bench-message-bytes";

// Upper bounds the server accepts, so a bad request cannot make it loop or allocate without end.
inline constexpr std::int64_t kMaxStreamMessages = 10'000'000;
inline constexpr std::int64_t kMaxMessageBytes = 256LL << 20;

}  // namespace sparktrace::loadgen
