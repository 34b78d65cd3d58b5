#pragma once
// One direction of one call, between the relay and the taps: parses the gRPC framing of the
// DATA bytes as they are queued (GrpcMessageFramer), counts messages, and shows each complete
// message to the taps as pieces of the receive blocks it landed in. A message is only kept
// (by reference, not copied) when some tap of the call asked for bytes, and only until its last
// byte; a compressed one is inflated for the taps when its encoding is gzip or deflate, and
// counted as undecodable otherwise.

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/call_observer.h"
#include "proxy/grpc_message_framer.h"
#include "proxy/receive_blocks.h"

namespace sparktrace::proxy {

class MessageTapper final : private GrpcMessageVisitor {
 public:
  using Deliver = std::function<void(const TappedMessage&)>;

  // `keep_bytes`: whether the taps need message bytes. `deliver` runs once per message.
  MessageTapper(std::uint32_t max_message_bytes, bool keep_bytes, Deliver deliver)
      : framer_(max_message_bytes), keep_bytes_(keep_bytes), deliver_(std::move(deliver)) {}

  // The stream's grpc-encoding ("identity" or empty: none), from its headers.
  void SetEncoding(std::string_view encoding) { encoding_ = encoding; }

  // Feeds bytes that now live in `block` at [offset, offset + size).
  GrpcFramingError Feed(ReceiveBlock* block, std::size_t offset, std::size_t size);

  const GrpcMessageFramer& framer() const { return framer_; }
  const MessageCount& count() const { return count_; }

 private:
  void OnMessageStart(bool compressed, std::uint32_t length) override;
  void OnMessagePayload(GrpcBytes piece) override;
  void OnMessageEnd() override;
  // Inflates the kept pieces into inflated_; false when the encoding is unknown or the bytes bad.
  bool Inflate();
  bool CanInflate() const;

  GrpcMessageFramer framer_;
  const bool keep_bytes_;
  Deliver deliver_;
  std::string encoding_;
  MessageCount count_;

  ReceiveBlock* feeding_ = nullptr;  // the block of the bytes being fed
  TappedMessage current_;
  std::vector<BlockPiece> pieces_;  // the current message's bytes, while kept
  std::vector<std::span<const std::uint8_t>> views_;
  std::vector<std::uint8_t> inflated_;
};

}  // namespace sparktrace::proxy
