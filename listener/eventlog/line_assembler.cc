#include "listener/eventlog/line_assembler.h"

#include <cstring>

namespace sparktrace::listener::eventlog {

std::uint64_t LineAssembler::Append(std::string_view bytes, const LineHandler& on_line) {
  std::uint64_t oversized = 0;
  std::size_t position = 0;
  while (position < bytes.size()) {
    const char* start = bytes.data() + position;
    const std::size_t available = bytes.size() - position;
    const auto* newline = static_cast<const char*>(std::memchr(start, '\n', available));
    const std::size_t segment_length =
        newline != nullptr ? static_cast<std::size_t>(newline - start) : available;
    const std::string_view segment(start, segment_length);
    const std::uint64_t segment_offset = decoded_offset_ + position;

    if (newline == nullptr) {  // the line goes on in a later call
      if (!skipping_oversized_) {
        if (pending_.empty()) line_start_ = segment_offset;
        if (pending_.size() + segment.size() > max_line_bytes_) {
          ++oversized;
          skipping_oversized_ = true;
          std::string().swap(pending_);  // the bound is the whole point: do not keep the memory
        } else {
          pending_.append(segment);
        }
      }
      break;
    }

    position += segment_length + 1;
    if (skipping_oversized_) {  // this newline ends the dropped line
      skipping_oversized_ = false;
      continue;
    }
    if (pending_.empty()) {
      // The common case: the whole line lies in this piece and is handed on without a copy.
      if (segment.size() > max_line_bytes_) {
        ++oversized;
      } else {
        on_line(segment, segment_offset);
      }
      continue;
    }
    if (pending_.size() + segment.size() > max_line_bytes_) {
      ++oversized;
    } else {
      pending_.append(segment);
      on_line(pending_, line_start_);
    }
    pending_.clear();
  }
  decoded_offset_ += bytes.size();
  return oversized;
}

void LineAssembler::Finish(const LineHandler& on_line) {
  if (!pending_.empty()) on_line(pending_, line_start_);
  pending_.clear();
  skipping_oversized_ = false;
}

void LineAssembler::ReleaseIdleMemory() {
  if (pending_.empty()) std::string().swap(pending_);
}

}  // namespace sparktrace::listener::eventlog
