#include "proxy/grpc_message_framer.h"

#include <algorithm>

namespace sparktrace::proxy {

std::string_view GrpcFramingErrorName(GrpcFramingError error) {
  switch (error) {
    case GrpcFramingError::kNone:
      return "none";
    case GrpcFramingError::kBadCompressedFlag:
      return "bad compressed flag";
    case GrpcFramingError::kMessageTooLarge:
      return "message too large";
  }
  return "unknown";
}

std::string_view GrpcStreamEndName(GrpcStreamEnd end) {
  switch (end) {
    case GrpcStreamEnd::kClean:
      return "clean";
    case GrpcStreamEnd::kTruncatedPrefix:
      return "truncated prefix";
    case GrpcStreamEnd::kTruncatedPayload:
      return "truncated payload";
    case GrpcStreamEnd::kFailed:
      return "failed";
  }
  return "unknown";
}

GrpcFramingError GrpcMessageFramer::StartMessage(std::span<const std::uint8_t, kPrefixBytes> prefix,
                                                 GrpcMessageVisitor& visitor) {
  const std::uint8_t flag = prefix[0];
  if (flag > 1) {
    error_ = GrpcFramingError::kBadCompressedFlag;
    return error_;
  }
  const std::uint32_t length = (std::uint32_t{prefix[1]} << 24U) | (std::uint32_t{prefix[2]} << 16U) |
                               (std::uint32_t{prefix[3]} << 8U) | std::uint32_t{prefix[4]};
  // Checked here, on the prefix alone: nothing of an oversized message is ever reported.
  if (length > max_message_bytes_) {
    error_ = GrpcFramingError::kMessageTooLarge;
    refused_length_ = length;
    return error_;
  }
  visitor.OnMessageStart(flag == 1, length);
  if (length == 0) {
    ++messages_;
    visitor.OnMessageEnd();
  } else {
    payload_left_ = length;
  }
  return GrpcFramingError::kNone;
}

GrpcFramingError GrpcMessageFramer::Feed(GrpcBytes chunk, GrpcMessageVisitor& visitor) {
  if (error_ != GrpcFramingError::kNone) return error_;
  while (!chunk.empty()) {
    if (payload_left_ > 0) {
      // Zero copy: the piece is a view of the caller's chunk.
      const auto take = static_cast<std::uint32_t>(std::min<std::size_t>(payload_left_, chunk.size()));
      visitor.OnMessagePayload(chunk.first(take));
      chunk = chunk.subspan(take);
      payload_left_ -= take;
      if (payload_left_ == 0) {
        ++messages_;
        visitor.OnMessageEnd();
      }
      continue;
    }
    if (prefix_size_ == 0 && chunk.size() >= kPrefixBytes) {
      // The common case, a whole prefix in the chunk: read it in place.
      const GrpcFramingError error = StartMessage(chunk.first<kPrefixBytes>(), visitor);
      if (error != GrpcFramingError::kNone) return error;
      chunk = chunk.subspan(kPrefixBytes);
      continue;
    }
    // A prefix cut by a chunk boundary: gather it (at most 5 bytes, the only bytes ever copied).
    const std::size_t take = std::min<std::size_t>(kPrefixBytes - prefix_size_, chunk.size());
    std::copy_n(chunk.begin(), take, prefix_.begin() + prefix_size_);
    prefix_size_ = static_cast<std::uint8_t>(prefix_size_ + take);
    chunk = chunk.subspan(take);
    if (prefix_size_ < kPrefixBytes) break;  // the chunk is used up; the rest comes with the next one
    prefix_size_ = 0;
    const GrpcFramingError error = StartMessage(prefix_, visitor);
    if (error != GrpcFramingError::kNone) return error;
  }
  return GrpcFramingError::kNone;
}

GrpcStreamEnd GrpcMessageFramer::AtEndOfStream() const {
  if (error_ != GrpcFramingError::kNone) return GrpcStreamEnd::kFailed;
  if (payload_left_ > 0) return GrpcStreamEnd::kTruncatedPayload;
  if (prefix_size_ > 0) return GrpcStreamEnd::kTruncatedPrefix;
  return GrpcStreamEnd::kClean;
}

}  // namespace sparktrace::proxy
