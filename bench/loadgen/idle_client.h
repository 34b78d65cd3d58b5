// `client --mode idle`: opens N streams that carry nothing and holds them open.
#pragma once

#include "flags.h"

namespace sparktrace::loadgen {

// Opens --streams idle streams, waits until each has received initial metadata (or
// --establish-timeout passes), prints one JSON line, then holds them until standard input
// closes, SIGINT/SIGTERM arrives, or --hold-max passes; then cancels them and exits.
// `signal_fd` comes from BlockTerminationSignals().
int RunIdleClient(const ClientOptions& options, int signal_fd);

}  // namespace sparktrace::loadgen
