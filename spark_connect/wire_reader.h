#pragma once
// WireReader: a forward-only cursor over one protobuf wire-format message (or an embedded message
// within it) that is spread over several slices.
//
// It reads tags and scalar values, copies only the strings asked for (up to a cap), and skips
// everything else by length, so a 100 MiB Arrow batch costs a few slice steps. It never throws and
// never reads outside the slices; the first problem is recorded in a DecodeStatus the caller owns
// and shares with every sub-message reader of the same decode.
//
// Threads: none of its own; a reader and its sub-readers belong to one decode on one thread.
// Lifetime: borrows the slices and the status; both must outlive the reader.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "spark_connect/decode_status.h"
#include "spark_connect/message_slices.h"

namespace sparktrace::spark_connect {

enum class WireType : std::uint8_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct FieldTag {
  std::uint32_t number = 0;
  WireType wire_type = WireType::kVarint;
};

class WireReader {
 public:
  // Embedded messages entered plus groups skipped, counted from the top-level message. Spark
  // Connect's proto3 messages use no groups and the decoders enter at most five levels, so
  // anything deeper is hostile input (protobuf's own limit is 100).
  static constexpr int kMaxNestingDepth = 64;

  // A reader over a whole message. `status` receives the first failure; leave it kOk.
  WireReader(MessageSlices slices, DecodeStatus* status);

  // Reads the next tag. False at the end of the message, or after a failure that makes the rest
  // of this message unreadable (already recorded).
  bool NextField(FieldTag* tag);

  // Value readers for the field whose tag NextField just returned. Each checks the wire type:
  // a mismatch records kWrongWireType, skips the value and returns false, as does a value that
  // cannot be read. Integer conversions follow protobuf (int64 and bool from a varint's bits;
  // int32/enum from its low 32 bits).
  bool ReadUint64(const FieldTag& tag, std::uint64_t* value);
  bool ReadInt64(const FieldTag& tag, std::int64_t* value);
  bool ReadInt32(const FieldTag& tag, std::int32_t* value);
  bool ReadBool(const FieldTag& tag, bool* value);
  // Copies at most `max_bytes` of a string/bytes field into `value` (replacing it) and skips
  // the rest, so a hostile length cannot make the proxy allocate.
  bool ReadString(const FieldTag& tag, std::size_t max_bytes, std::string* value);
  // Skips a length-delimited field, reporting its payload length (e.g. Arrow data).
  bool SkipLengthDelimited(const FieldTag& tag, std::uint64_t* length);
  // A reader over a length-delimited field's payload, as an embedded message; this reader moves
  // past it. nullopt (with the failure recorded) for another wire type or a payload that does not
  // fit, or when the nesting limit is reached.
  std::optional<WireReader> EnterMessage(const FieldTag& tag);
  // Skips the field's value whatever its wire type; groups are skipped iteratively.
  void SkipField(const FieldTag& tag);

  // Bytes left in this (sub-)message.
  std::size_t remaining() const { return remaining_; }

 private:
  void Fail(DecodeStatus status);
  void Stop(DecodeStatus status);  // Fail, and end this reader: its remaining bytes are unusable
  bool ReadByte(std::uint8_t* byte);
  bool ReadRawVarint(std::uint64_t* value);
  bool ReadRawTag(FieldTag* tag);
  bool ReadLength(std::size_t* length);
  bool SkipBytes(std::size_t count);
  bool SkipGroup(std::uint32_t field_number);
  bool ExpectWireType(const FieldTag& tag, WireType expected);

  MessageSlices slices_;
  std::size_t slice_ = 0;   // current slice
  std::size_t offset_ = 0;  // next byte within slices_[slice_]
  std::size_t remaining_ = 0;
  int depth_ = 0;
  bool stopped_ = false;
  DecodeStatus* status_;
};

}  // namespace sparktrace::spark_connect
