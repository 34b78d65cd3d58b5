#pragma once
// Turns the decoded bytes of one file into complete '\n'-terminated lines. The unfinished last line is
// kept until its newline arrives; a line longer than the bound is dropped (and counted) while it is
// skipped to its newline, so memory stays within the bound whatever the file holds.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace sparktrace::listener::eventlog {

class LineAssembler {
 public:
  // `line` excludes the '\n' and is valid only during the call; `offset` is where it starts in the
  // file's decoded bytes.
  using LineHandler = std::function<void(std::string_view line, std::uint64_t offset)>;

  explicit LineAssembler(std::size_t max_line_bytes) : max_line_bytes_(max_line_bytes) {}

  // Feeds the next decoded bytes; calls `on_line` for each line they complete. Returns how many lines
  // were found to exceed the bound (dropped, never passed to `on_line`).
  std::uint64_t Append(std::string_view bytes, const LineHandler& on_line);

  // The file ended for good: hands its unfinished last line, if any, to `on_line` (Spark ends every
  // line with '\n', but a file cut short or written by other tools may lack the last one), then
  // resets. A line being skipped as oversized was counted by Append and is not handed on.
  void Finish(const LineHandler& on_line);

  std::size_t pending_bytes() const { return pending_.size(); }
  std::uint64_t decoded_offset() const { return decoded_offset_; }
  void ReleaseIdleMemory();

 private:
  std::size_t max_line_bytes_;
  std::string pending_;               // start of the unfinished line
  bool skipping_oversized_ = false;   // inside a dropped line: discard up to the next '\n'
  std::uint64_t decoded_offset_ = 0;  // decoded bytes seen so far
  std::uint64_t line_start_ = 0;      // offset of the first byte of the unfinished line
};

}  // namespace sparktrace::listener::eventlog
