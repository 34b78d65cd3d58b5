#include "spark_connect/wire_reader.h"

#include <algorithm>
#include <array>

namespace sparktrace::spark_connect {
namespace {

constexpr std::uint64_t kMaxFieldNumber = (std::uint64_t{1} << 29) - 1;
constexpr int kMaxVarintBytes = 10;

}  // namespace

WireReader::WireReader(MessageSlices slices, DecodeStatus* status) : slices_(slices), status_(status) {
  for (const ByteSlice& slice : slices_) {
    remaining_ += slice.size();
  }
}

void WireReader::Fail(DecodeStatus status) {
  if (*status_ == DecodeStatus::kOk) {
    *status_ = status;
  }
}

void WireReader::Stop(DecodeStatus status) {
  Fail(status);
  stopped_ = true;
}

bool WireReader::ReadByte(std::uint8_t* byte) {
  if (remaining_ == 0) {
    return false;
  }
  while (slice_ < slices_.size() && offset_ == slices_[slice_].size()) {  // also steps over empty slices
    ++slice_;
    offset_ = 0;
  }
  if (slice_ == slices_.size()) {  // unreachable: remaining_ never exceeds the bytes left in slices_
    return false;
  }
  *byte = slices_[slice_][offset_++];
  --remaining_;
  return true;
}

bool WireReader::ReadRawVarint(std::uint64_t* value) {
  std::uint64_t result = 0;
  for (int i = 0; i < kMaxVarintBytes; ++i) {
    std::uint8_t byte = 0;
    if (!ReadByte(&byte)) {
      Stop(DecodeStatus::kTruncated);
      return false;
    }
    // Bits beyond 64 in the tenth byte are dropped, as protobuf does.
    result |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  Stop(DecodeStatus::kMalformed);  // an eleventh byte would follow
  return false;
}

bool WireReader::ReadRawTag(FieldTag* tag) {
  std::uint64_t key = 0;
  if (!ReadRawVarint(&key)) {
    return false;
  }
  const std::uint64_t number = key >> 3;
  const std::uint64_t wire_type = key & 7;
  if (number == 0 || number > kMaxFieldNumber || wire_type > 5) {
    Stop(DecodeStatus::kMalformed);
    return false;
  }
  tag->number = static_cast<std::uint32_t>(number);
  tag->wire_type = static_cast<WireType>(wire_type);
  return true;
}

bool WireReader::ReadLength(std::size_t* length) {
  std::uint64_t value = 0;
  if (!ReadRawVarint(&value)) {
    return false;
  }
  if (value > remaining_) {
    Stop(DecodeStatus::kTruncated);
    return false;
  }
  *length = static_cast<std::size_t>(value);
  return true;
}

bool WireReader::SkipBytes(std::size_t count) {
  if (count > remaining_) {
    Stop(DecodeStatus::kTruncated);
    return false;
  }
  remaining_ -= count;
  while (count > 0 && slice_ < slices_.size()) {
    const std::size_t step = std::min(count, slices_[slice_].size() - offset_);
    offset_ += step;
    count -= step;
    if (offset_ == slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
    }
  }
  return true;
}

bool WireReader::SkipGroup(std::uint32_t field_number) {
  // Iterative, with an explicit stack of open group numbers: recursion depth must not depend on
  // the input.
  std::array<std::uint32_t, kMaxNestingDepth> open{};
  std::size_t open_count = 0;
  if (depth_ + 1 > kMaxNestingDepth) {
    Stop(DecodeStatus::kTooDeep);
    return false;
  }
  open[open_count++] = field_number;
  while (open_count > 0) {
    FieldTag tag;
    if (!ReadRawTag(&tag)) {
      return false;
    }
    switch (tag.wire_type) {
      case WireType::kVarint: {
        std::uint64_t ignored = 0;
        if (!ReadRawVarint(&ignored)) {
          return false;
        }
        break;
      }
      case WireType::kFixed64:
        if (!SkipBytes(8)) {
          return false;
        }
        break;
      case WireType::kFixed32:
        if (!SkipBytes(4)) {
          return false;
        }
        break;
      case WireType::kLengthDelimited: {
        std::size_t length = 0;
        if (!ReadLength(&length) || !SkipBytes(length)) {
          return false;
        }
        break;
      }
      case WireType::kStartGroup:
        if (depth_ + static_cast<int>(open_count) + 1 > kMaxNestingDepth) {
          Stop(DecodeStatus::kTooDeep);
          return false;
        }
        open[open_count++] = tag.number;
        break;
      case WireType::kEndGroup:
        if (open[open_count - 1] != tag.number) {
          Stop(DecodeStatus::kMalformed);
          return false;
        }
        --open_count;
        break;
    }
  }
  return true;
}

bool WireReader::NextField(FieldTag* tag) {
  if (stopped_ || remaining_ == 0) {
    return false;
  }
  if (!ReadRawTag(tag)) {
    return false;
  }
  if (tag->wire_type == WireType::kEndGroup) {  // closes a group that was never opened
    Stop(DecodeStatus::kMalformed);
    return false;
  }
  return true;
}

void WireReader::SkipField(const FieldTag& tag) {
  switch (tag.wire_type) {
    case WireType::kVarint: {
      std::uint64_t ignored = 0;
      ReadRawVarint(&ignored);
      return;
    }
    case WireType::kFixed64:
      SkipBytes(8);
      return;
    case WireType::kFixed32:
      SkipBytes(4);
      return;
    case WireType::kLengthDelimited: {
      std::size_t length = 0;
      if (ReadLength(&length)) {
        SkipBytes(length);
      }
      return;
    }
    case WireType::kStartGroup:
      SkipGroup(tag.number);
      return;
    case WireType::kEndGroup:
      Stop(DecodeStatus::kMalformed);
      return;
  }
}

bool WireReader::ExpectWireType(const FieldTag& tag, WireType expected) {
  if (tag.wire_type == expected) {
    return true;
  }
  // protobuf itself would keep such a field as an unknown field; for tracing it means the peer
  // does not speak the schema we expect, which is worth counting. The rest stays readable.
  Fail(DecodeStatus::kWrongWireType);
  SkipField(tag);
  return false;
}

bool WireReader::ReadUint64(const FieldTag& tag, std::uint64_t* value) {
  return ExpectWireType(tag, WireType::kVarint) && ReadRawVarint(value);
}

bool WireReader::ReadInt64(const FieldTag& tag, std::int64_t* value) {
  std::uint64_t raw = 0;
  if (!ReadUint64(tag, &raw)) {
    return false;
  }
  *value = static_cast<std::int64_t>(raw);
  return true;
}

bool WireReader::ReadInt32(const FieldTag& tag, std::int32_t* value) {
  std::uint64_t raw = 0;
  if (!ReadUint64(tag, &raw)) {
    return false;
  }
  *value = static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
  return true;
}

bool WireReader::ReadBool(const FieldTag& tag, bool* value) {
  std::uint64_t raw = 0;
  if (!ReadUint64(tag, &raw)) {
    return false;
  }
  *value = raw != 0;
  return true;
}

bool WireReader::ReadString(const FieldTag& tag, std::size_t max_bytes, std::string* value) {
  std::size_t length = 0;
  if (!ExpectWireType(tag, WireType::kLengthDelimited) || !ReadLength(&length)) {
    return false;
  }
  const std::size_t copied = std::min(length, max_bytes);
  value->clear();
  value->reserve(copied);
  std::size_t left = copied;
  while (left > 0) {
    while (slice_ < slices_.size() && offset_ == slices_[slice_].size()) {
      ++slice_;
      offset_ = 0;
    }
    if (slice_ == slices_.size()) {  // unreachable: ReadLength checked that `length` bytes follow
      Stop(DecodeStatus::kTruncated);
      return false;
    }
    const ByteSlice& slice = slices_[slice_];
    const std::size_t step = std::min(left, slice.size() - offset_);
    value->append(reinterpret_cast<const char*>(slice.data() + offset_), step);
    offset_ += step;
    remaining_ -= step;
    left -= step;
  }
  return SkipBytes(length - copied);
}

bool WireReader::SkipLengthDelimited(const FieldTag& tag, std::uint64_t* length) {
  std::size_t size = 0;
  if (!ExpectWireType(tag, WireType::kLengthDelimited) || !ReadLength(&size)) {
    return false;
  }
  *length = size;
  return SkipBytes(size);
}

std::optional<WireReader> WireReader::EnterMessage(const FieldTag& tag) {
  std::size_t length = 0;
  if (!ExpectWireType(tag, WireType::kLengthDelimited) || !ReadLength(&length)) {
    return std::nullopt;
  }
  if (depth_ + 1 > kMaxNestingDepth) {
    Fail(DecodeStatus::kTooDeep);
    SkipBytes(length);
    return std::nullopt;
  }
  WireReader child = *this;
  child.remaining_ = length;
  child.depth_ = depth_ + 1;
  SkipBytes(length);
  return child;
}

}  // namespace sparktrace::spark_connect
