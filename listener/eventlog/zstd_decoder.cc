#include "listener/eventlog/zstd_decoder.h"

#include <string>

namespace sparktrace::listener::eventlog {

Result<void> ZstdDecoder::Decode(std::string_view input, const Output& output) {
  if (input.empty()) return {};
  if (!context_) {
    context_.reset(ZSTD_createDCtx());
    if (!context_) return Error{ErrorCode::kInternal, "zstd: cannot allocate a decompression context"};
  }
  if (output_buffer_.empty()) output_buffer_.resize(ZSTD_DStreamOutSize());

  ZSTD_inBuffer in{input.data(), input.size(), 0};
  for (;;) {
    ZSTD_outBuffer out{output_buffer_.data(), output_buffer_.size(), 0};
    const std::size_t before = in.pos;
    const std::size_t result = ZSTD_decompressStream(context_.get(), &out, &in);
    if (ZSTD_isError(result)) {
      return Error{ErrorCode::kInvalidArgument, std::string("zstd: ") + ZSTD_getErrorName(result)};
    }
    if (out.pos > 0) output(std::string_view(output_buffer_.data(), out.pos));
    // 0 means a frame just ended and everything it held was flushed; any other value is a hint for
    // the next read. Counting the consumed input tells "inside a frame" from "between frames".
    bytes_into_frame_ = result == 0 ? 0 : bytes_into_frame_ + (in.pos - before);
    // A full output buffer may mean more decoded bytes are waiting even with all input consumed.
    if (in.pos == in.size && out.pos < out.size) break;
  }
  return {};
}

void ZstdDecoder::ReleaseIdleMemory() {
  if (HoldsIncompleteUnit()) return;
  context_.reset();
  std::vector<char>().swap(output_buffer_);
}

}  // namespace sparktrace::listener::eventlog
