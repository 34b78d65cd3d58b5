#include "payload.h"

#include <grpcpp/support/slice.h>

#include <map>
#include <mutex>
#include <string>

namespace sparktrace::loadgen {

grpc::ByteBuffer SharedPayload(std::size_t size) {
  static std::mutex mu;
  static auto* slices = new std::map<std::size_t, grpc::Slice>();  // never freed: lives as long as the process
  std::lock_guard lock(mu);
  auto it = slices->find(size);
  if (it == slices->end()) {
    std::string bytes(size, '\0');
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    it = slices->emplace(size, grpc::Slice(bytes)).first;
  }
  return grpc::ByteBuffer(&it->second, 1);
}

}  // namespace sparktrace::loadgen
