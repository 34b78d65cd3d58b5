#pragma once
// The not-yet-complete tail of a block-structured stream (lz4-java, snappy-java). Parsing runs straight
// on the caller's bytes when nothing is pending, the usual case; only a partial unit is ever copied.

#include <cstddef>
#include <string>
#include <string_view>

namespace sparktrace::listener::eventlog {

class PendingInput {
 public:
  // The bytes to parse now: `input` alone, or what was kept with `input` appended.
  std::string_view Combine(std::string_view input) {
    if (kept_.empty()) return input;
    kept_.append(input);
    return kept_;
  }

  // After parsing `combined` (what Combine returned) up to `consumed`: keeps the rest.
  void Keep(std::string_view combined, std::size_t consumed) {
    if (!kept_.empty() && combined.data() == kept_.data()) {
      kept_.erase(0, consumed);
    } else {
      kept_.assign(combined.substr(consumed));
    }
  }

  bool empty() const { return kept_.empty(); }
  std::size_t size() const { return kept_.size(); }
  void ReleaseIdleMemory() {
    if (kept_.empty()) std::string().swap(kept_);
  }

 private:
  std::string kept_;
};

}  // namespace sparktrace::listener::eventlog
