// libFuzzer entry point for the incremental gRPC message framer (proxy/grpc_message_framer.h).
//
// Input layout: byte 0 chooses the max message size; byte 1 (low 4 bits) says how many chunk sizes
// follow; each of those bytes is a chunk size (0..63, 0 feeds an empty chunk), used in turn and
// cycled until the stream is fed; the rest is the gRPC byte stream. Each chunk is copied into its
// own buffer, as DATA frames arrive in separate buffers.
//
// Besides the sanitizers' checks the fuzzer asserts: the chunked framer reports exactly what a
// simple whole-buffer parser finds (same messages, flags, payload bytes, and the same error or
// end-of-stream state); every payload piece is non-empty and lies inside the chunk being fed (zero
// copy); and nothing is reported after an error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <vector>

#include "proxy/grpc_message_framer.h"

namespace sparktrace::proxy {
namespace {

[[noreturn]] void Fail(const char* what) {
  std::fprintf(stderr, "grpc_framer_fuzzer: %s\n", what);
  std::abort();
}

struct Message {
  bool compressed = false;
  std::uint32_t declared = 0;
  std::vector<std::uint8_t> payload;
  bool ended = false;

  bool operator==(const Message&) const = default;
};

struct Outcome {
  std::vector<Message> messages;
  GrpcFramingError error = GrpcFramingError::kNone;
  GrpcStreamEnd end = GrpcStreamEnd::kClean;

  bool operator==(const Outcome&) const = default;
};

// The reference: the whole stream at once, the format read straight off the page.
Outcome ParseWhole(std::span<const std::uint8_t> stream, std::uint32_t max_message_bytes) {
  Outcome out;
  std::size_t pos = 0;
  while (pos < stream.size()) {
    if (stream.size() - pos < 5) {
      out.end = GrpcStreamEnd::kTruncatedPrefix;
      return out;
    }
    const std::uint8_t flag = stream[pos];
    const std::uint32_t length = (std::uint32_t{stream[pos + 1]} << 24U) |
                                 (std::uint32_t{stream[pos + 2]} << 16U) |
                                 (std::uint32_t{stream[pos + 3]} << 8U) | std::uint32_t{stream[pos + 4]};
    if (flag > 1) {
      out.error = GrpcFramingError::kBadCompressedFlag;
      out.end = GrpcStreamEnd::kFailed;
      return out;
    }
    if (length > max_message_bytes) {
      out.error = GrpcFramingError::kMessageTooLarge;
      out.end = GrpcStreamEnd::kFailed;
      return out;
    }
    pos += 5;
    Message& message = out.messages.emplace_back();
    message.compressed = flag == 1;
    message.declared = length;
    const std::size_t available = std::min<std::size_t>(length, stream.size() - pos);
    message.payload.assign(stream.begin() + static_cast<std::ptrdiff_t>(pos),
                           stream.begin() + static_cast<std::ptrdiff_t>(pos + available));
    pos += available;
    if (available < length) {
      out.end = GrpcStreamEnd::kTruncatedPayload;
      return out;
    }
    message.ended = true;
  }
  return out;
}

class Recorder : public GrpcMessageVisitor {
 public:
  void OnMessageStart(bool compressed, std::uint32_t length) override {
    if (!outcome.messages.empty() && !outcome.messages.back().ended) Fail("start inside a message");
    Message& message = outcome.messages.emplace_back();
    message.compressed = compressed;
    message.declared = length;
  }
  void OnMessagePayload(GrpcBytes piece) override {
    if (outcome.messages.empty() || outcome.messages.back().ended) Fail("payload outside a message");
    if (piece.empty()) Fail("empty payload piece");
    // Zero copy: the piece must be a view of the chunk being fed, not of a copy.
    if (piece.data() < chunk.data() || piece.data() + piece.size() > chunk.data() + chunk.size()) {
      Fail("payload piece outside the fed chunk");
    }
    auto& payload = outcome.messages.back().payload;
    payload.insert(payload.end(), piece.begin(), piece.end());
    if (payload.size() > outcome.messages.back().declared) Fail("more payload than declared");
  }
  void OnMessageEnd() override {
    if (outcome.messages.empty() || outcome.messages.back().ended) Fail("end outside a message");
    if (outcome.messages.back().payload.size() != outcome.messages.back().declared) {
      Fail("short message ended");
    }
    outcome.messages.back().ended = true;
  }

  Outcome outcome;
  std::span<const std::uint8_t> chunk;
};

// One input: see the layout at the top of the file.
void FuzzOne(std::span<const std::uint8_t> input) {
  if (input.size() < 2) return;
  // Small limits make kMessageTooLarge reachable; 255 stands for "no practical limit".
  const std::uint32_t max_message_bytes = input[0] == 255 ? 0xFFFFFFFFU : input[0];
  const std::size_t size_count = std::min<std::size_t>(input[1] & 0x0FU, input.size() - 2);
  const auto sizes = input.subspan(2, size_count);
  const auto stream = input.subspan(2 + size_count);

  const Outcome expected = ParseWhole(stream, max_message_bytes);

  GrpcMessageFramer framer(max_message_bytes);
  Recorder recorder;
  GrpcFramingError error = GrpcFramingError::kNone;
  std::size_t pos = 0;
  std::size_t turn = 0;
  std::size_t empty_in_a_row = 0;
  while (pos < stream.size()) {
    std::size_t take = stream.size() - pos;
    if (!sizes.empty()) take = std::min<std::size_t>(sizes[turn++ % sizes.size()] % 64U, take);
    // All sizes zero would never finish: after a whole round of empty chunks, feed the rest.
    empty_in_a_row = take == 0 ? empty_in_a_row + 1 : 0;
    if (empty_in_a_row > sizes.size()) take = stream.size() - pos;
    const std::vector<std::uint8_t> chunk(stream.begin() + static_cast<std::ptrdiff_t>(pos),
                                          stream.begin() + static_cast<std::ptrdiff_t>(pos + take));
    recorder.chunk = chunk;
    const std::size_t messages_before = recorder.outcome.messages.size();
    const GrpcFramingError fed = framer.Feed(chunk, recorder);
    if (error != GrpcFramingError::kNone) {
      if (fed != error) Fail("a later Feed forgot the error");
      if (recorder.outcome.messages.size() != messages_before) Fail("a message after an error");
    }
    if (fed != GrpcFramingError::kNone) error = fed;
    if (fed != framer.error()) Fail("Feed and error() disagree");
    pos += take;
  }
  recorder.outcome.error = error;
  recorder.outcome.end = framer.AtEndOfStream();
  if (!(recorder.outcome == expected)) Fail("chunked framer differs from the whole-buffer parse");
  std::uint64_t ended = 0;
  for (const auto& message : expected.messages) ended += message.ended ? 1 : 0;
  if (framer.messages() != ended) Fail("messages() miscounts");
}

}  // namespace
}  // namespace sparktrace::proxy

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sparktrace::proxy::FuzzOne(std::span<const std::uint8_t>(data, size));
  return 0;
}
