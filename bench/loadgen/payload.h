// Pre-allocated message payloads: one slice per size, shared (by reference) by every write.
#pragma once

#include <grpcpp/support/byte_buffer.h>

#include <cstddef>

namespace sparktrace::loadgen {

// Returns a ByteBuffer of `size` bytes that references a slice allocated once per size for the
// life of the process. Copying the ByteBuffer only takes a reference. Thread-safe.
grpc::ByteBuffer SharedPayload(std::size_t size);

}  // namespace sparktrace::loadgen
