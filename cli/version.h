#pragma once

namespace sparktrace::cli {

// `sparktrace --version`, the OTLP resource's service.version and scope version.
inline constexpr const char* kServiceVersion = "0.1.0";

}  // namespace sparktrace::cli
