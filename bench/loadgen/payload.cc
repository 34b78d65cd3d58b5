#include "payload.h"

#include <grpcpp/support/slice.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <random>
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

FixedRequest::FixedRequest(std::string bytes, std::string placeholder)
    : bytes_(std::move(bytes)), placeholder_(std::move(placeholder)), shared_(bytes_) {}

grpc::ByteBuffer FixedRequest::Next() const {
  if (placeholder_.empty()) return grpc::ByteBuffer(&shared_, 1);
  std::string bytes = bytes_;
  for (auto at = bytes.find(placeholder_); at != std::string::npos;
       at = bytes.find(placeholder_, at + placeholder_.size())) {
    bytes.replace(at, placeholder_.size(), NewUuid4());
  }
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

std::string NewUuid4() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t hi = rng(), lo = rng();
  hi = (hi & ~std::uint64_t{0xf000}) | 0x4000;                                  // version 4
  lo = (lo & ~(std::uint64_t{0xc} << 60)) | (std::uint64_t{0x8} << 60);         // variant 10
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 32; ++i) {
    const std::uint64_t word = i < 16 ? hi : lo;
    const int shift = 60 - 4 * (i % 16);
    if (i == 8 || i == 12 || i == 16 || i == 20) out.push_back('-');
    out.push_back(kHex[(word >> shift) & 0xf]);
  }
  return out;
}

}  // namespace sparktrace::loadgen
