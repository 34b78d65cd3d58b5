#pragma once
// How much of a message the decoders copy at most. Every copy is bounded by these, never by a
// length the peer sends; what does not fit is cut (strings) or counted (repeated values).

#include <cstddef>

namespace sparktrace::spark_connect {

// Ids are UUIDs and user ids short names; a longer string is cut to this many bytes.
inline constexpr std::size_t kMaxCopiedStringBytes = 1024;
// Repeated strings kept per message (ExecutePlanRequest.tags, InterruptResponse.interrupted_ids).
inline constexpr std::size_t kMaxCopiedRepeatedStrings = 64;
// Stages kept per ExecutePlanResponse.execution_progress.
inline constexpr std::size_t kMaxDecodedStages = 256;

}  // namespace sparktrace::spark_connect
