#include "proxy/message_tapper.h"

#include <algorithm>

#include <zlib.h>

namespace sparktrace::proxy {

GrpcFramingError MessageTapper::Feed(ReceiveBlock* block, std::size_t offset, std::size_t size) {
  feeding_ = block;
  return framer_.Feed({block->data() + offset, size}, *this);
}

void MessageTapper::OnMessageStart(bool compressed, std::uint32_t length) {
  StopKeeping();
  current_ = TappedMessage{};
  current_.wire_bytes = length;
  current_.compressed = compressed;
  keeping_ = keep_bytes_;
  if (keeping_ && length > limits_.max_kept_bytes) {
    keeping_ = false;
    LimitHit(RelayLimit::kTracedMessageBytes);
  }
}

void MessageTapper::OnMessagePayload(GrpcBytes piece) {
  if (!keeping_) return;
  if (limits_.budget != nullptr) {
    if (!limits_.budget->TryTake(piece.size())) {
      StopKeeping();  // forwarded all the same; the taps see its size only
      LimitHit(RelayLimit::kBufferBudget);
      return;
    }
    kept_bytes_ += piece.size();
  }
  const auto offset = static_cast<std::size_t>(piece.data() - feeding_->data());
  pieces_.emplace_back(feeding_, offset, piece.size());
}

void MessageTapper::StopKeeping() {
  keeping_ = false;
  pieces_.clear();  // releases the blocks the message held
  if (limits_.budget != nullptr && kept_bytes_ > 0) limits_.budget->Give(kept_bytes_);
  kept_bytes_ = 0;
}

void MessageTapper::LimitHit(RelayLimit limit) const {
  if (limits_.stats != nullptr) limits_.stats->Hit(limit);
}

void MessageTapper::OnMessageEnd() {
  ++count_.messages;
  count_.bytes += current_.wire_bytes;
  views_.clear();
  if (keeping_) {
    if (!current_.compressed) {
      for (const BlockPiece& piece : pieces_) views_.push_back(piece.bytes());
      current_.bytes_available = true;
    } else if (Inflate()) {
      views_.emplace_back(inflated_.data(), inflated_.size());
      current_.bytes_available = true;
    } else if (inflated_over_limit_) {
      LimitHit(RelayLimit::kTracedMessageBytes);
    } else {
      ++count_.undecodable;
    }
    current_.bytes = views_;
  } else if (current_.compressed && !CanInflate()) {
    ++count_.undecodable;  // known without inflating: counted whether or not a tap wants bytes
  }
  deliver_(current_);
  StopKeeping();
  current_.bytes = {};
  // A large inflated message must not stay allocated for the rest of a long stream.
  if (inflated_.capacity() > std::size_t{1} << 20) std::vector<std::uint8_t>().swap(inflated_);
}

bool MessageTapper::CanInflate() const { return encoding_ == "gzip" || encoding_ == "deflate"; }

bool MessageTapper::Inflate() {
  int window_bits = 0;
  if (encoding_ == "gzip") {
    window_bits = 16 + MAX_WBITS;
  } else if (encoding_ == "deflate") {
    window_bits = MAX_WBITS;
  } else {
    return false;
  }
  z_stream stream{};
  if (inflateInit2(&stream, window_bits) != Z_OK) return false;
  inflated_.clear();
  int result = Z_OK;
  for (const BlockPiece& piece : pieces_) {
    stream.next_in = const_cast<Bytef*>(piece.bytes().data());  // zlib's API is not const-correct
    stream.avail_in = static_cast<uInt>(piece.size());
    do {
      // The inflated size is bounded like any kept message: a small "zip bomb" must not grow memory.
      if (inflated_.size() > InflateLimit()) {
        result = Z_MEM_ERROR;
        break;
      }
      // Room for one byte past the limit: a message of exactly the limit can still reach its end
      // (end-of-block code, gzip trailer) in a later piece, and a larger one shows by that byte.
      const std::size_t before = inflated_.size();
      const std::size_t chunk = std::min<std::size_t>(std::size_t{64} * 1024, InflateLimit() + 1 - before);
      inflated_.resize(before + chunk);
      stream.next_out = inflated_.data() + before;
      stream.avail_out = static_cast<uInt>(chunk);
      result = inflate(&stream, Z_NO_FLUSH);
      inflated_.resize(before + chunk - stream.avail_out);
      if (result == Z_BUF_ERROR) result = Z_OK;  // no progress possible: needs the next piece
      // Output space ran out: inflate may hold more, so go round again even without input.
    } while (result == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0));
    if (result != Z_OK) break;
  }
  inflateEnd(&stream);
  // Past the message limit a message is undecodable, as before tracing had its own limit; past
  // only the tracing limit (smaller), it is a message too large to trace.
  inflated_over_limit_ = result == Z_MEM_ERROR && limits_.max_kept_bytes < framer_.max_message_bytes();
  return result == Z_STREAM_END && inflated_.size() <= InflateLimit();
}

std::size_t MessageTapper::InflateLimit() const {
  return std::min<std::size_t>(framer_.max_message_bytes(), limits_.max_kept_bytes);
}

}  // namespace sparktrace::proxy
