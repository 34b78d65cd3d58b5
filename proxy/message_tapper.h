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
#include "proxy/relay_budget.h"
#include "proxy/relay_stats.h"

namespace sparktrace::proxy {

// What a tap may make the proxy keep. A message is kept whole, by reference, until its last byte
// (a tap decodes it then), so its bytes outlive their forwarding: they are taken from the relay
// budget, and a message over `max_kept_bytes` is not kept at all (a larger Spark Connect plan
// or result batch is forwarded, and traced without its contents).
struct TapLimits {
  std::uint32_t max_kept_bytes = 16U << 20;
  RelayBudget* budget = nullptr;  // null: no budget (unit tests)
  RelayStats* stats = nullptr;    // null: not counted
};

class MessageTapper final : private GrpcMessageVisitor {
 public:
  using Deliver = std::function<void(const TappedMessage&)>;

  // `keep_bytes`: whether the taps need message bytes. `deliver` runs once per message.
  MessageTapper(std::uint32_t max_message_bytes, bool keep_bytes, Deliver deliver, TapLimits limits = {})
      : framer_(max_message_bytes), keep_bytes_(keep_bytes), deliver_(std::move(deliver)), limits_(limits) {}
  ~MessageTapper() override { StopKeeping(); }
  MessageTapper(const MessageTapper&) = delete;
  MessageTapper& operator=(const MessageTapper&) = delete;

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
  // The most a message may inflate to: the message limit, or what may be kept if smaller.
  std::size_t InflateLimit() const;
  // Lets go of the current message's kept pieces and gives their bytes back to the budget.
  void StopKeeping();
  void LimitHit(RelayLimit limit) const;

  GrpcMessageFramer framer_;
  const bool keep_bytes_;
  Deliver deliver_;
  const TapLimits limits_;
  bool keeping_ = false;             // the current message's bytes are being kept
  std::size_t kept_bytes_ = 0;       // taken from the budget for them
  bool inflated_over_limit_ = false;  // the last Inflate stopped at InflateLimit
  std::string encoding_;
  MessageCount count_;

  ReceiveBlock* feeding_ = nullptr;  // the block of the bytes being fed
  TappedMessage current_;
  std::vector<BlockPiece> pieces_;  // the current message's bytes, while kept
  std::vector<std::span<const std::uint8_t>> views_;
  std::vector<std::uint8_t> inflated_;
};

}  // namespace sparktrace::proxy
