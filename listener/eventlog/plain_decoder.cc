#include "listener/eventlog/plain_decoder.h"

namespace sparktrace::listener::eventlog {

Result<void> PlainDecoder::Decode(std::string_view input, const Output& output) {
  if (!input.empty()) output(input);
  return {};
}

}  // namespace sparktrace::listener::eventlog
