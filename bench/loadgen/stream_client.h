// `client --mode stream`: server-streaming throughput.
#pragma once

#include "flags.h"

namespace sparktrace::loadgen {

// Each worker runs calls of --messages x --message-bytes back to back until --duration has
// passed (or --calls calls were made), after one short warm-up call each. Prints one JSON line.
int RunStreamClient(const ClientOptions& options);

}  // namespace sparktrace::loadgen
