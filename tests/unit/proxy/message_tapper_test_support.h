#pragma once
// Shared by the MessageTapper tests: the message limit, text that compresses, gzip, gRPC framing, and
// a harness that feeds a tapper the way the relay does and records what it delivers.

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/message_tapper.h"
#include "proxy/receive_blocks.h"
#include "tests/unit/proxy/receive_blocks_test_support.h"

namespace sparktrace::proxy {

inline constexpr std::uint32_t kMax = 4U * 1024U * 1024U;
// Sizes in KiB as std::size_t, so that products like 70 * kKiB are computed in size_t.
inline constexpr std::size_t kKiB = 1024;

// Text that compresses well.
inline Bytes Text(std::size_t size) {
  static constexpr std::string_view kLine = "SELECT id, name FROM events WHERE id = ";
  Bytes out;
  out.reserve(size);
  for (std::size_t line = 0; out.size() < size; ++line) {
    const std::string text = std::string(kLine) + std::to_string(line) + ";\n";
    out.insert(out.end(), text.begin(), text.end());
  }
  out.resize(size);
  return out;
}

// zlib's deflate: gzip framing with window_bits 16 + MAX_WBITS, zlib framing with MAX_WBITS.
inline Bytes Compress(const Bytes& input, int window_bits) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  Bytes out(deflateBound(&stream, static_cast<uLong>(input.size())) + 64);
  stream.next_in = const_cast<Bytef*>(input.data());
  stream.avail_in = static_cast<uInt>(input.size());
  stream.next_out = out.data();
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}
inline Bytes Gzip(const Bytes& input) { return Compress(input, 16 + MAX_WBITS); }

inline void AppendMessage(Bytes& stream, bool compressed, const Bytes& payload) {
  const auto length = static_cast<std::uint32_t>(payload.size());
  stream.push_back(compressed ? 1 : 0);
  stream.push_back(static_cast<std::uint8_t>(length >> 24U));
  stream.push_back(static_cast<std::uint8_t>(length >> 16U));
  stream.push_back(static_cast<std::uint8_t>(length >> 8U));
  stream.push_back(static_cast<std::uint8_t>(length));
  stream.insert(stream.end(), payload.begin(), payload.end());
}

// What a tap saw of one message: the bytes are gathered from the pieces during the call, as the
// pieces are only valid then.
struct Delivered {
  std::uint64_t wire_bytes = 0;
  bool compressed = false;
  bool bytes_available = false;
  Bytes bytes;
  std::size_t pieces = 0;
  bool pieces_inside_blocks = true;  // every piece lies inside a receive block the queue stored into
};

// The relay's side of one stream direction: DATA payloads are appended to a RelayQueue and the
// tapper is fed from its on_stored callback, the way proxy/relayed_call.cc does.
class Harness {
 public:
  Harness(std::uint32_t max_message_bytes, bool keep_bytes, TapLimits limits = {})
      : limits_(limits),
        tapper_(
            max_message_bytes, keep_bytes, [this](const TappedMessage& message) { OnMessage(message); },
            limits) {}

  // One DATA payload; returns the framing error, as the relay sees it.
  GrpcFramingError Push(std::span<const std::uint8_t> payload) {
    GrpcFramingError error = GrpcFramingError::kNone;
    queue_.Append(payload, [&](ReceiveBlock* block, std::size_t offset, std::size_t size) {
      blocks_.insert(block);
      if (error == GrpcFramingError::kNone) error = tapper_.Feed(block, offset, size);
    });
    return error;
  }

  // The whole stream, cut into payloads of `chunk` bytes (the last one shorter).
  GrpcFramingError PushInChunks(const Bytes& stream, std::size_t chunk) {
    GrpcFramingError error = GrpcFramingError::kNone;
    for (std::size_t offset = 0; offset < stream.size(); offset += chunk) {
      const std::size_t size = std::min(chunk, stream.size() - offset);
      error = Push({stream.data() + offset, size});
      if (error != GrpcFramingError::kNone) break;
    }
    return error;
  }

  ReceiveBlockPool& pool() { return pool_; }
  RelayQueue& queue() { return queue_; }
  MessageTapper& tapper() { return tapper_; }
  const std::vector<Delivered>& delivered() const { return delivered_; }
  // The budget's balance as each message was delivered (with a budget).
  const std::vector<std::size_t>& taken_at_delivery() const { return taken_at_delivery_; }

 private:
  void OnMessage(const TappedMessage& message) {
    if (limits_.budget != nullptr) taken_at_delivery_.push_back(limits_.budget->taken());
    Delivered& seen = delivered_.emplace_back();
    seen.wire_bytes = message.wire_bytes;
    seen.compressed = message.compressed;
    seen.bytes_available = message.bytes_available;
    seen.pieces = message.bytes.size();
    for (const std::span<const std::uint8_t> piece : message.bytes) {
      seen.bytes.insert(seen.bytes.end(), piece.begin(), piece.end());
      const bool inside = std::any_of(blocks_.begin(), blocks_.end(), [&](ReceiveBlock* block) {
        return piece.data() >= block->data() && piece.data() + piece.size() <= block->data() + kBlock;
      });
      seen.pieces_inside_blocks = seen.pieces_inside_blocks && inside;
    }
  }

  // Declared first: destroyed last, after everything holding its blocks.
  ReceiveBlockPool pool_;
  RelayQueue queue_{pool_};
  std::set<ReceiveBlock*> blocks_;
  std::vector<Delivered> delivered_;
  std::vector<std::size_t> taken_at_delivery_;
  TapLimits limits_;
  MessageTapper tapper_;
};

struct Message {
  bool compressed;
  Bytes wire;     // the payload as sent
  Bytes content;  // what the tap should see
};

inline Bytes Frame(const std::vector<Message>& messages) {
  Bytes stream;
  for (const Message& message : messages) AppendMessage(stream, message.compressed, message.wire);
  return stream;
}

inline void ExpectDelivered(const Harness& harness, const std::vector<Message>& expected, bool keep_bytes) {
  const auto& delivered = harness.delivered();
  ASSERT_EQ(delivered.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "message " << i);
    EXPECT_EQ(delivered[i].wire_bytes, expected[i].wire.size());
    EXPECT_EQ(delivered[i].compressed, expected[i].compressed);
    EXPECT_EQ(delivered[i].bytes_available, keep_bytes);
    if (keep_bytes) {
      EXPECT_EQ(delivered[i].bytes, expected[i].content);
    } else {
      EXPECT_EQ(delivered[i].pieces, 0U);
    }
  }
}

inline std::uint64_t WireBytes(const std::vector<Message>& messages) {
  std::uint64_t total = 0;
  for (const Message& message : messages) total += message.wire.size();
  return total;
}

}  // namespace sparktrace::proxy
