// `client --mode stream`: server-streaming throughput.
#pragma once

#include "flags.h"

namespace sparktrace::loadgen {

// Each worker runs calls of --messages x --message-bytes back to back until --duration has
// passed (or --calls calls were made), after one short warm-up call each. Prints one JSON line.
// --read-bytes-per-s paces each call's reads; --progress-bytes reports bytes read to stderr.
int RunStreamClient(const ClientOptions& options);

}  // namespace sparktrace::loadgen
