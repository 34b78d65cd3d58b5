#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spark_connect/wire_reader.h"
#include "tests/unit/spark_connect/spark_connect_test_support.h"

namespace sparktrace::spark_connect {
namespace {

std::string Tag(std::uint32_t number, WireType type) {
  return Varint((std::uint64_t{number} << 3) | static_cast<std::uint32_t>(type));
}

// Reads `bytes`, cut into slices of one byte each (the worst case for straddling fields).
std::vector<ByteSlice> ByteBySlice(std::string_view bytes) {
  std::vector<ByteSlice> slices;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    slices.push_back(AsSlice(bytes.substr(i, 1)));
  }
  return slices;
}

TEST(SparkConnectWireReader, ReadsVarintsOfEveryLengthAcrossOneByteSlices) {
  const std::array<std::uint64_t, 8> values = {0, 1, 127, 128, 300, 1ULL << 35, (1ULL << 63) + 5, ~0ULL};
  std::string bytes;
  for (std::size_t i = 0; i < values.size(); ++i) {
    bytes += Tag(static_cast<std::uint32_t>(i + 1), WireType::kVarint) + Varint(values[i]);
  }
  const std::vector<ByteSlice> slices = ByteBySlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(slices, &status);
  FieldTag tag;
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_TRUE(reader.NextField(&tag)) << i;
    EXPECT_EQ(tag.number, i + 1);
    EXPECT_EQ(tag.wire_type, WireType::kVarint);
    std::uint64_t value = 0;
    ASSERT_TRUE(reader.ReadUint64(tag, &value));
    EXPECT_EQ(value, values[i]);
  }
  EXPECT_FALSE(reader.NextField(&tag));
  EXPECT_EQ(status, DecodeStatus::kOk);
}

TEST(SparkConnectWireReader, IntegerConversionsFollowProtobuf) {
  // int32 -1 is sent as a ten-byte varint; int64 keeps all bits; bool is "not zero".
  const std::string bytes = Tag(1, WireType::kVarint) + Varint(~0ULL) + Tag(2, WireType::kVarint) +
                            Varint(~0ULL) + Tag(3, WireType::kVarint) + Varint(256);
  const ByteSlice slice = AsSlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(MessageSlices(&slice, 1), &status);
  FieldTag tag;
  std::int32_t as_int32 = 0;
  std::int64_t as_int64 = 0;
  bool as_bool = false;
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadInt32(tag, &as_int32));
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadInt64(tag, &as_int64));
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadBool(tag, &as_bool));
  EXPECT_EQ(as_int32, -1);
  EXPECT_EQ(as_int64, -1);
  EXPECT_TRUE(as_bool);
  EXPECT_EQ(status, DecodeStatus::kOk);
}

TEST(SparkConnectWireReader, CopiesStringsAcrossSlicesAndCapsTheCopy) {
  const std::string text(100, 'x');
  const std::string bytes = LengthDelimitedField(1, "hello") + LengthDelimitedField(2, text) +
                            LengthDelimitedField(3, "") + Tag(4, WireType::kVarint) + Varint(9);
  const std::vector<ByteSlice> slices = ByteBySlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(slices, &status);
  FieldTag tag;
  std::string value = "previous";
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadString(tag, 64, &value));
  EXPECT_EQ(value, "hello");
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadString(tag, 10, &value));
  EXPECT_EQ(value, std::string(10, 'x'));  // cut, and the rest of the field skipped
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadString(tag, 64, &value));
  EXPECT_EQ(value, "");
  ASSERT_TRUE(reader.NextField(&tag));
  EXPECT_EQ(tag.number, 4u);
  std::uint64_t number = 0;
  ASSERT_TRUE(reader.ReadUint64(tag, &number));
  EXPECT_EQ(number, 9u);
  EXPECT_EQ(status, DecodeStatus::kOk);
}

TEST(SparkConnectWireReader, SkipsLargeFieldsByLengthAndStepsOverEmptySlices) {
  const std::string big(1 << 20, '\x7f');
  const std::string bytes = LengthDelimitedField(2, big) + Tag(1, WireType::kVarint) + Varint(42);
  // Slices: empty, the tag and part of the payload, empty, the rest.
  const std::array<ByteSlice, 4> slices = {AsSlice(""), AsSlice(std::string_view(bytes).substr(0, 1000)),
                                           AsSlice(""), AsSlice(std::string_view(bytes).substr(1000))};
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(slices, &status);
  FieldTag tag;
  ASSERT_TRUE(reader.NextField(&tag));
  std::uint64_t length = 0;
  ASSERT_TRUE(reader.SkipLengthDelimited(tag, &length));
  EXPECT_EQ(length, big.size());
  ASSERT_TRUE(reader.NextField(&tag));
  std::uint64_t value = 0;
  ASSERT_TRUE(reader.ReadUint64(tag, &value));
  EXPECT_EQ(value, 42u);
  EXPECT_EQ(status, DecodeStatus::kOk);
}

TEST(SparkConnectWireReader, SubMessageReaderIsBoundedByTheFieldLength) {
  const std::string inner = Tag(1, WireType::kVarint) + Varint(7);
  const std::string bytes = LengthDelimitedField(3, inner) + Tag(1, WireType::kVarint) + Varint(8);
  const std::vector<ByteSlice> slices = ByteBySlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(slices, &status);
  FieldTag tag;
  ASSERT_TRUE(reader.NextField(&tag));
  auto child = reader.EnterMessage(tag);
  ASSERT_TRUE(child.has_value());
  EXPECT_EQ(child->remaining(), inner.size());
  std::uint64_t value = 0;
  ASSERT_TRUE(child->NextField(&tag));
  ASSERT_TRUE(child->ReadUint64(tag, &value));
  EXPECT_EQ(value, 7u);
  EXPECT_FALSE(child->NextField(&tag));  // does not run into the parent's next field
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadUint64(tag, &value));
  EXPECT_EQ(value, 8u);
  EXPECT_EQ(status, DecodeStatus::kOk);
}

TEST(SparkConnectWireReader, SkipsEveryWireTypeIncludingNestedGroups) {
  const std::string group_body = Tag(1, WireType::kVarint) + Varint(5) + Tag(2, WireType::kStartGroup) +
                                 LengthDelimitedField(3, "abc") + Tag(2, WireType::kEndGroup);
  const std::string bytes = Tag(1, WireType::kVarint) + Varint(300) + Tag(2, WireType::kFixed64) +
                            std::string(8, '\1') + Tag(3, WireType::kFixed32) + std::string(4, '\2') +
                            LengthDelimitedField(4, "payload") + Tag(5, WireType::kStartGroup) + group_body +
                            Tag(5, WireType::kEndGroup) + Tag(6, WireType::kVarint) + Varint(1);
  const std::vector<ByteSlice> slices = ByteBySlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(slices, &status);
  FieldTag tag;
  std::vector<std::uint32_t> seen;
  while (reader.NextField(&tag)) {
    seen.push_back(tag.number);
    reader.SkipField(tag);
  }
  EXPECT_EQ(seen, (std::vector<std::uint32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(status, DecodeStatus::kOk);
}

struct BadInput {
  const char* name;
  std::string bytes;
  DecodeStatus expected;
};

TEST(SparkConnectWireReader, FlagsMalformedInput) {
  const std::vector<BadInput> cases = {
      {"field number 0", Varint(0 << 3) + Varint(1), DecodeStatus::kMalformed},
      {"wire type 6", Varint((1 << 3) | 6), DecodeStatus::kMalformed},
      {"wire type 7", Varint((1 << 3) | 7), DecodeStatus::kMalformed},
      {"field number above 2^29-1", Varint((std::uint64_t{1} << 32) | 0), DecodeStatus::kMalformed},
      {"eleven-byte varint", Tag(1, WireType::kVarint) + std::string(10, '\x80') + "\x01",
       DecodeStatus::kMalformed},
      {"varint cut off", Tag(1, WireType::kVarint) + "\x80\x80", DecodeStatus::kTruncated},
      {"tag cut off", "\x80", DecodeStatus::kTruncated},
      {"length beyond the end", Tag(1, WireType::kLengthDelimited) + Varint(10) + "abc",
       DecodeStatus::kTruncated},
      {"huge length", Tag(1, WireType::kLengthDelimited) + Varint(~0ULL), DecodeStatus::kTruncated},
      {"fixed64 cut off", Tag(1, WireType::kFixed64) + "1234", DecodeStatus::kTruncated},
      {"fixed32 cut off", Tag(1, WireType::kFixed32) + "12", DecodeStatus::kTruncated},
      {"end group without start", Tag(1, WireType::kEndGroup), DecodeStatus::kMalformed},
      {"group never closed", Tag(1, WireType::kStartGroup) + Tag(2, WireType::kVarint) + Varint(1),
       DecodeStatus::kTruncated},
      {"group closed by another number", Tag(1, WireType::kStartGroup) + Tag(2, WireType::kEndGroup),
       DecodeStatus::kMalformed},
  };
  for (const BadInput& bad : cases) {
    const ByteSlice slice = AsSlice(bad.bytes);
    DecodeStatus status = DecodeStatus::kOk;
    WireReader reader(MessageSlices(&slice, 1), &status);
    FieldTag tag;
    int fields = 0;
    while (reader.NextField(&tag) && fields < 100) {
      reader.SkipField(tag);
      ++fields;
    }
    EXPECT_EQ(status, bad.expected) << bad.name << ": " << DecodeStatusName(status);
    EXPECT_TRUE(IsDecodeFailure(status)) << bad.name;
  }
}

TEST(SparkConnectWireReader, WrongWireTypeIsSkippedAndTheRestStaysReadable) {
  const std::string bytes = Tag(1, WireType::kVarint) + Varint(5) + LengthDelimitedField(2, "ok");
  const ByteSlice slice = AsSlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(MessageSlices(&slice, 1), &status);
  FieldTag tag;
  std::string value;
  ASSERT_TRUE(reader.NextField(&tag));
  EXPECT_FALSE(reader.ReadString(tag, 64, &value));  // field 1 should have been a string
  ASSERT_TRUE(reader.NextField(&tag));
  ASSERT_TRUE(reader.ReadString(tag, 64, &value));
  EXPECT_EQ(value, "ok");
  EXPECT_EQ(status, DecodeStatus::kWrongWireType);

  // The same for a sub-message expected where a fixed32 arrives.
  const std::string fixed = Tag(3, WireType::kFixed32) + "abcd" + Tag(4, WireType::kVarint) + Varint(1);
  const ByteSlice fixed_slice = AsSlice(fixed);
  DecodeStatus fixed_status = DecodeStatus::kOk;
  WireReader fixed_reader(MessageSlices(&fixed_slice, 1), &fixed_status);
  ASSERT_TRUE(fixed_reader.NextField(&tag));
  EXPECT_FALSE(fixed_reader.EnterMessage(tag).has_value());
  ASSERT_TRUE(fixed_reader.NextField(&tag));
  EXPECT_EQ(tag.number, 4u);
  EXPECT_EQ(fixed_status, DecodeStatus::kWrongWireType);
}

TEST(SparkConnectWireReader, KeepsTheFirstFailure) {
  const std::string bytes = Tag(1, WireType::kVarint) + Varint(5) + Tag(2, WireType::kVarint) + "\x80";
  const ByteSlice slice = AsSlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(MessageSlices(&slice, 1), &status);
  FieldTag tag;
  std::string value;
  ASSERT_TRUE(reader.NextField(&tag));
  reader.ReadString(tag, 64, &value);
  ASSERT_TRUE(reader.NextField(&tag));
  reader.SkipField(tag);
  EXPECT_FALSE(reader.NextField(&tag));
  EXPECT_EQ(status, DecodeStatus::kWrongWireType);
}

std::string NestedGroups(int depth) {
  std::string bytes;
  for (int i = 0; i < depth; ++i) {
    bytes += Tag(7, WireType::kStartGroup);
  }
  for (int i = 0; i < depth; ++i) {
    bytes += Tag(7, WireType::kEndGroup);
  }
  return bytes;
}

DecodeStatus SkipAll(std::string_view bytes) {
  const ByteSlice slice = AsSlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  WireReader reader(MessageSlices(&slice, 1), &status);
  FieldTag tag;
  while (reader.NextField(&tag)) {
    reader.SkipField(tag);
  }
  return status;
}

TEST(SparkConnectWireReader, BoundsGroupNesting) {
  EXPECT_EQ(SkipAll(NestedGroups(WireReader::kMaxNestingDepth)), DecodeStatus::kOk);
  EXPECT_EQ(SkipAll(NestedGroups(WireReader::kMaxNestingDepth + 1)), DecodeStatus::kTooDeep);
  // A million open groups: rejected early, without recursion.
  std::string hostile;
  for (int i = 0; i < 1'000'000; ++i) {
    hostile += Tag(7, WireType::kStartGroup);
  }
  EXPECT_EQ(SkipAll(hostile), DecodeStatus::kTooDeep);
}

TEST(SparkConnectWireReader, BoundsSubMessageNesting) {
  std::string bytes = Tag(1, WireType::kVarint) + Varint(1);
  for (int i = 0; i < WireReader::kMaxNestingDepth + 1; ++i) {
    bytes = LengthDelimitedField(1, bytes);
  }
  const ByteSlice slice = AsSlice(bytes);
  DecodeStatus status = DecodeStatus::kOk;
  std::optional<WireReader> reader(WireReader(MessageSlices(&slice, 1), &status));
  int depth = 0;
  FieldTag tag;
  while (reader->NextField(&tag) && tag.wire_type == WireType::kLengthDelimited) {
    std::optional<WireReader> child = reader->EnterMessage(tag);
    if (!child) {
      break;
    }
    reader.emplace(*child);
    ++depth;
  }
  EXPECT_EQ(depth, WireReader::kMaxNestingDepth);
  EXPECT_EQ(status, DecodeStatus::kTooDeep);
}

TEST(SparkConnectWireReader, StatusNames) {
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kOk), "ok");
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kNotDecoded), "not_decoded");
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kTruncated), "truncated");
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kMalformed), "malformed");
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kWrongWireType), "wrong_wire_type");
  EXPECT_EQ(DecodeStatusName(DecodeStatus::kTooDeep), "too_deep");
  EXPECT_FALSE(IsDecodeFailure(DecodeStatus::kOk));
  EXPECT_FALSE(IsDecodeFailure(DecodeStatus::kNotDecoded));
}

}  // namespace
}  // namespace sparktrace::spark_connect
