#include "proxy/message_pump.h"

#include <string>

#include <gtest/gtest.h>

namespace sparktrace::proxy {
namespace {

grpc::ByteBuffer BufferOf(const std::string& text) {
  grpc::Slice slice(text);
  return grpc::ByteBuffer(&slice, 1);
}

std::string TextOf(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  std::string text;
  for (const auto& slice : slices) text.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return text;
}

// Simulates a completed read of `text` into the pump.
void Read(MessagePump& pump, const std::string& text) {
  ASSERT_TRUE(pump.CanStartRead());
  pump.ReadStarted();
  *pump.read_target() = BufferOf(text);
  pump.ReadSucceeded();
}

TEST(MessagePump, StopsReadingWhenTheWindowIsFull) {
  MessagePump pump(2);
  Read(pump, "a");
  Read(pump, "b");
  EXPECT_FALSE(pump.CanStartRead()) << "two buffered messages fill a window of 2";
  pump.WriteStarted();
  EXPECT_FALSE(pump.CanStartRead()) << "the message being written still counts";
  pump.WriteFinished();
  EXPECT_TRUE(pump.CanStartRead());
}

TEST(MessagePump, KeepsOrderAndContent) {
  MessagePump pump(2);
  Read(pump, "first");
  Read(pump, "second");
  ASSERT_TRUE(pump.CanStartWrite());
  pump.WriteStarted();
  EXPECT_EQ(TextOf(*pump.write_source()), "first");
  EXPECT_FALSE(pump.CanStartWrite()) << "one write at a time";
  pump.WriteFinished();
  pump.WriteStarted();
  EXPECT_EQ(TextOf(*pump.write_source()), "second");
  pump.WriteFinished();
  EXPECT_TRUE(pump.Drained());
}

TEST(MessagePump, OneReadAtATimeAndNoneAfterTheSourceEnds) {
  MessagePump pump(4);
  pump.ReadStarted();
  EXPECT_FALSE(pump.CanStartRead());
  pump.ReadFailed();
  EXPECT_TRUE(pump.source_done());
  EXPECT_FALSE(pump.CanStartRead());
  EXPECT_TRUE(pump.Drained());
}

TEST(MessagePump, ReadTargetIsEmptyAfterHandOver) {
  MessagePump pump(2);
  Read(pump, "x");
  EXPECT_EQ(pump.read_target()->Length(), 0u);
  EXPECT_EQ(pump.Buffered(), 1u);
}

}  // namespace
}  // namespace sparktrace::proxy
