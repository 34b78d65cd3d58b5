#pragma once

#include <string_view>

#include "proxy/call_observer.h"

namespace sparktrace::proxy {

// "OK", "UNAVAILABLE", … as in the gRPC specification; "CODE_OTHER" for values outside it.
std::string_view StatusCodeName(StatusCode code);

}  // namespace sparktrace::proxy
