// Pre-allocated message payloads: one slice per size, shared (by reference) by every write.
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstddef>
#include <string>

namespace sparktrace::loadgen {

// Returns a ByteBuffer of `size` bytes that references a slice allocated once per size for the
// life of the process. Copying the ByteBuffer only takes a reference. Thread-safe.
grpc::ByteBuffer SharedPayload(std::size_t size);

// A fixed request message (--request-file). Without a placeholder every call shares one slice;
// with one (--fresh-uuid), each Next() is a copy with every occurrence of the 36-byte
// placeholder replaced by a new random uuid4, e.g. a Spark Connect operation_id. Thread-safe.
class FixedRequest {
 public:
  FixedRequest(std::string bytes, std::string placeholder);
  grpc::ByteBuffer Next() const;

 private:
  std::string bytes_;
  std::string placeholder_;
  grpc::Slice shared_;
};

// A random version-4 UUID in its 36-character text form.
std::string NewUuid4();

}  // namespace sparktrace::loadgen
