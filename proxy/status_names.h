#pragma once

#include <string_view>

#include <grpcpp/support/status_code_enum.h>

namespace sparktrace::proxy {

// "OK", "UNAVAILABLE", … as in the gRPC specification; "CODE_<n>" for values outside it.
std::string_view StatusCodeName(grpc::StatusCode code);

}  // namespace sparktrace::proxy
