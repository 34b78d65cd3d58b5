// RelayedCall against fake connections: each test drives the call the way the two connections
// would (header fields, DATA, END_STREAM, stream closes, nghttp2 pulling DATA through the data
// provider) and checks the stream verbs the call used and the state of each direction.

#include "proxy/relayed_call.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <gtest/gtest.h>
#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proxy/call_connection.h"
#include "proxy/relay_context.h"

namespace sparktrace::proxy {
namespace {

using RequestState = RelayedCall::RequestState;
using ResponseState = RelayedCall::ResponseState;
using Submitted = CallConnection::Submitted;

constexpr std::int32_t kClientStreamId = 1;
constexpr std::int32_t kUpstreamStreamId = 3;

std::string_view Find(const std::vector<Header>& headers, std::string_view name) {
  for (const Header& header : headers) {
    if (header.name == name) return header.value;
  }
  return {};
}

// A gRPC message on the wire: the 5-byte prefix (not compressed, big-endian length) and `payload`.
std::string GrpcMessage(std::string_view payload) {
  const auto size = static_cast<std::uint32_t>(payload.size());
  std::string wire = {'\0', static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                      static_cast<char>(size >> 8), static_cast<char>(size)};
  wire += payload;
  return wire;
}

std::span<const std::uint8_t> BytesOf(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

// What one connection was asked to do, in the words of the stream verbs.
class FakeConnection final : public CallConnection {
 public:
  struct Response {
    std::vector<Header> headers;
    bool with_body;
  };
  struct Reset {
    std::int32_t stream_id;
    std::uint32_t error_code;
  };
  // What nghttp2 would have written for a stream's DATA until the provider deferred or ended.
  struct Pulled {
    std::string bytes;
    bool end_of_data = false;
    bool no_end_stream = false;  // the trailers carry END_STREAM
  };

  const std::string& peer() const override { return peer_; }
  Submitted SubmitRequest(std::vector<Header> headers, Http2Stream& stream) override {
    if (submit_result != Submitted::kYes) return submit_result;
    request = std::move(headers);
    upstream_stream = &stream;
    if (opens_at_once) stream.OnOpened(kUpstreamStreamId);
    return Submitted::kYes;
  }
  void SubmitResponse(std::int32_t /*stream_id*/, const std::vector<Header>& headers,
                      Http2Stream* body) override {
    responses.push_back({headers, body != nullptr});
  }
  bool SubmitTrailers(std::int32_t /*stream_id*/, const std::vector<Header>& headers) override {
    trailers = headers;
    return true;
  }
  void ResetStream(std::int32_t stream_id, std::uint32_t error_code) override {
    resets.push_back({stream_id, error_code});
  }
  void ResumeData(std::int32_t /*stream_id*/) override { ++resumed; }
  void Consume(std::int32_t /*stream_id*/, std::size_t bytes) override { consumed += bytes; }
  void GrowStreamWindow(std::int32_t /*stream_id*/, std::int32_t window) override { grown_to = window; }
  void DetachStream(std::int32_t /*stream_id*/, Http2Stream& /*stream*/) override { ++detached; }

  // Pulls `stream`'s DATA as nghttp2 does (ReadyToSend, then SendData for what it promised).
  static Pulled Pull(Http2Stream& stream) {
    Pulled pulled;
    const std::unique_ptr<evbuffer, CFree<evbuffer_free>> out(evbuffer_new());
    for (;;) {
      bool end_of_data = false;
      bool no_end_stream = false;
      const ssize_t ready = stream.ReadyToSend(16 * 1024, &end_of_data, &no_end_stream);
      if (ready < 0) break;  // deferred
      if (ready > 0) stream.SendData(out.get(), static_cast<std::size_t>(ready));
      if (end_of_data) {
        pulled.end_of_data = true;
        pulled.no_end_stream = no_end_stream;
        break;
      }
    }
    pulled.bytes.resize(evbuffer_get_length(out.get()));
    evbuffer_remove(out.get(), pulled.bytes.data(), pulled.bytes.size());
    return pulled;
  }

  Submitted submit_result = Submitted::kYes;
  bool opens_at_once = true;  // false: the request waits for the peer's SETTINGS
  std::vector<Header> request;
  Http2Stream* upstream_stream = nullptr;
  std::vector<Response> responses;
  std::optional<std::vector<Header>> trailers;
  std::vector<Reset> resets;
  int resumed = 0;
  std::size_t consumed = 0;
  std::int32_t grown_to = 0;
  int detached = 0;

 private:
  std::string peer_ = "ipv4:127.0.0.1:5000";
};

class FakeOwner final : public CallOwner {
 public:
  CallConnection* AcquireUpstream(std::string* why) override {
    if (upstream == nullptr) *why = "connection refused";
    return upstream;
  }
  void Finished(RelayedCall& /*call*/) override { ++finished; }

  CallConnection* upstream = nullptr;
  int finished = 0;
};

// Records what the taps are told.
class RecordingObserver final : public CallObserver {
 public:
  struct Seen {
    std::string method;
    int requests = 0;
    int responses = 0;
    std::optional<StatusCode> code;
    std::string error_message;
    std::uint64_t request_messages = 0;
    std::uint64_t response_messages = 0;
  };

  std::unique_ptr<CallTap> OnCallStarted(const CallStart& start) override {
    seen.method = std::string(start.method);
    return std::make_unique<Tap>(seen);
  }

  Seen seen;

 private:
  class Tap final : public CallTap {
   public:
    explicit Tap(Seen& seen) : seen_(seen) {}
    bool NeedsMessageBytes() const override { return false; }
    void OnRequestMessage(const TappedMessage& /*message*/) override { ++seen_.requests; }
    void OnResponseMessage(const TappedMessage& /*message*/) override { ++seen_.responses; }
    void OnCallEnded(const CallEnd& end) override {
      seen_.code = end.code;
      seen_.error_message = std::string(end.error_message);
      seen_.request_messages = end.requests.messages;
      seen_.response_messages = end.responses.messages;
    }

   private:
    Seen& seen_;
  };
};

class RelayedCallTest : public ::testing::Test {
 protected:
  RelayedCallTest() {
    environment_.upstream_authority = "spark:15002";
    environment_.max_message_bytes = 1024;
    environment_.budget = &budget_;
    environment_.stats = &stats_;
    environment_.observers = {&observer_};
    owner_.upstream = &upstream_;
  }

  RelayedCall& StartCall() {
    call_ = std::make_unique<RelayedCall>(context_, environment_, owner_, downstream_, kClientStreamId,
                                          std::make_shared<ConnectionShare>(std::size_t{64} << 20));
    return *call_;
  }

  // The client's HEADERS block, with `extra` after the usual request fields.
  void ClientHeaders(bool end_stream, const std::vector<Header>& extra = {}) {
    Http2Stream& client = call_->downstream_stream();
    for (const Header& header : std::vector<Header>{{":method", "POST"},
                                                    {":scheme", "http"},
                                                    {":path", "/spark.connect.SparkConnectService/Config"},
                                                    {":authority", "proxy:15002"},
                                                    {"content-type", "application/grpc"}}) {
      client.OnHeader(header.name, header.value, header.never_index);
    }
    for (const Header& header : extra) client.OnHeader(header.name, header.value, header.never_index);
    client.OnHeadersComplete(end_stream);
  }

  static void Headers(Http2Stream& stream, const std::vector<Header>& block, bool end_stream) {
    for (const Header& header : block) stream.OnHeader(header.name, header.value, header.never_index);
    stream.OnHeadersComplete(end_stream);
  }

  Http2Stream& client() { return call_->downstream_stream(); }
  Http2Stream& upstream() { return *upstream_.upstream_stream; }

  EventBasePtr base_{event_base_new()};
  RelayContext context_{base_.get()};
  RelayBudget budget_{std::size_t{256} << 20};
  RelayStats stats_;
  RecordingObserver observer_;
  RelayEnvironment environment_;
  FakeConnection downstream_;
  FakeConnection upstream_;
  FakeOwner owner_;
  std::unique_ptr<RelayedCall> call_;
};

TEST_F(RelayedCallTest, RelaysAUnaryCallThroughEveryStateOfBothDirections) {
  RelayedCall& call = StartCall();
  EXPECT_EQ(call.request_state(), RequestState::kReceivingHeaders);
  EXPECT_EQ(call.response_state(), ResponseState::kAwaitingHeaders);

  ClientHeaders(false, {{"user-agent", "grpc-python"}});
  EXPECT_EQ(call.request_state(), RequestState::kStreaming);
  ASSERT_NE(upstream_.upstream_stream, nullptr);
  // Rewritten for the upstream: its scheme and authority; everything else as sent, in order.
  ASSERT_GE(upstream_.request.size(), 6U);
  EXPECT_EQ(upstream_.request[0].name, ":method");
  EXPECT_EQ(upstream_.request[1].value, "http");
  EXPECT_EQ(upstream_.request[2].value, "/spark.connect.SparkConnectService/Config");
  EXPECT_EQ(upstream_.request[3].value, "spark:15002");
  EXPECT_EQ(Find(upstream_.request, "user-agent"), "grpc-python");
  EXPECT_EQ(observer_.seen.method, "/spark.connect.SparkConnectService/Config");

  // Request DATA waits for the upstream connection to pull it; the client's window reopens then.
  const std::string request = GrpcMessage("ping");
  client().OnData(BytesOf(request));
  EXPECT_EQ(upstream_.resumed, 1);
  EXPECT_EQ(downstream_.consumed, 0U);
  client().OnEndOfData();
  EXPECT_EQ(call.request_state(), RequestState::kHalfClosed);
  const FakeConnection::Pulled sent_upstream = FakeConnection::Pull(upstream());
  EXPECT_EQ(sent_upstream.bytes, request);
  EXPECT_TRUE(sent_upstream.end_of_data);
  EXPECT_FALSE(sent_upstream.no_end_stream);
  EXPECT_EQ(downstream_.consumed, request.size());
  EXPECT_EQ(observer_.seen.requests, 1);

  Headers(upstream(), {{":status", "200"}, {"content-type", "application/grpc"}}, false);
  EXPECT_EQ(call.response_state(), ResponseState::kStreaming);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_TRUE(downstream_.responses[0].with_body);

  const std::string response = GrpcMessage("pong");
  upstream().OnData(BytesOf(response));
  EXPECT_EQ(downstream_.resumed, 1);
  Headers(upstream(), {{"grpc-status", "0"}}, true);
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersQueued);
  EXPECT_EQ(downstream_.resumed, 2);

  const FakeConnection::Pulled sent_downstream = FakeConnection::Pull(client());
  EXPECT_EQ(sent_downstream.bytes, response);
  EXPECT_TRUE(sent_downstream.end_of_data);
  EXPECT_TRUE(sent_downstream.no_end_stream);
  ASSERT_TRUE(downstream_.trailers.has_value());
  EXPECT_EQ(Find(*downstream_.trailers, "grpc-status"), "0");
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersSent);
  EXPECT_EQ(upstream_.consumed, response.size());

  upstream().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  EXPECT_EQ(owner_.finished, 0);  // the client's stream is still open
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(owner_.finished, 1);
  EXPECT_EQ(observer_.seen.code, StatusCode::kOk);
  EXPECT_EQ(observer_.seen.request_messages, 1U);
  EXPECT_EQ(observer_.seen.response_messages, 1U);
  EXPECT_TRUE(upstream_.resets.empty());
  EXPECT_TRUE(downstream_.resets.empty());
}

TEST_F(RelayedCallTest, PassesATrailersOnlyAnswerOnInOneBlock) {
  RelayedCall& call = StartCall();
  ClientHeaders(true);
  EXPECT_EQ(call.request_state(), RequestState::kHalfClosed);
  Headers(upstream(), {{":status", "200"}, {"grpc-status", "5"}, {"grpc-message", "no such table"}}, true);
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersOnlySent);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_FALSE(downstream_.responses[0].with_body);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "5");

  upstream().OnStreamClosed(NGHTTP2_NO_ERROR);
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(observer_.seen.code, StatusCode::kNotFound);
  EXPECT_EQ(observer_.seen.error_message, "no such table");
}

TEST_F(RelayedCallTest, AClientResetCancelsTheUpstreamStream) {
  RelayedCall& call = StartCall();
  ClientHeaders(false);
  client().OnData(BytesOf(GrpcMessage("half")));
  client().OnStreamClosed(NGHTTP2_CANCEL);

  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  ASSERT_EQ(upstream_.resets.size(), 1U);
  EXPECT_EQ(upstream_.resets[0].stream_id, kUpstreamStreamId);
  EXPECT_EQ(upstream_.resets[0].error_code, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
  EXPECT_EQ(upstream_.detached, 1);
  EXPECT_TRUE(downstream_.responses.empty());  // the client is gone: nothing is sent to it
  EXPECT_EQ(owner_.finished, 1);
  EXPECT_EQ(observer_.seen.code, StatusCode::kCancelled);
  EXPECT_EQ(observer_.seen.error_message, "cancelled by the client");
}

TEST_F(RelayedCallTest, AnUpstreamResetBeforeTheResponseIsATrailersOnlyStatus) {
  RelayedCall& call = StartCall();
  ClientHeaders(true);
  upstream().OnStreamClosed(NGHTTP2_REFUSED_STREAM);

  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersOnlySent);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "14");  // UNAVAILABLE
  EXPECT_TRUE(upstream_.resets.empty());  // the upstream stream is over already
  EXPECT_EQ(owner_.finished, 0);
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(owner_.finished, 1);
  EXPECT_EQ(observer_.seen.code, StatusCode::kUnavailable);
}

TEST_F(RelayedCallTest, AnUpstreamResetAfterTheHeadersEndsTheResponseWithTrailers) {
  RelayedCall& call = StartCall();
  ClientHeaders(true);
  Headers(upstream(), {{":status", "200"}}, false);
  upstream().OnData(BytesOf(GrpcMessage("partial")));
  upstream().OnStreamClosed(NGHTTP2_CANCEL);

  EXPECT_EQ(call.response_state(), ResponseState::kTrailersQueued);
  const FakeConnection::Pulled sent = FakeConnection::Pull(client());
  EXPECT_TRUE(sent.bytes.empty());  // what the failed call had queued is not delivered
  EXPECT_TRUE(sent.no_end_stream);
  ASSERT_TRUE(downstream_.trailers.has_value());
  EXPECT_EQ(Find(*downstream_.trailers, "grpc-status"), "1");  // CANCELLED
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersSent);
}

TEST_F(RelayedCallTest, ALostUpstreamConnectionIsUnavailable) {
  StartCall();
  ClientHeaders(true);
  upstream().OnStreamClosed(kConnectionLost);
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(observer_.seen.code, StatusCode::kUnavailable);
  EXPECT_EQ(observer_.seen.error_message, "upstream connection failed or was lost");
}

TEST_F(RelayedCallTest, AnUnreachableUpstreamFailsTheCallAtOnce) {
  owner_.upstream = nullptr;
  RelayedCall& call = StartCall();
  ClientHeaders(true);

  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersOnlySent);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "14");
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(observer_.seen.error_message, "upstream unreachable: connection refused");
}

TEST_F(RelayedCallTest, AClosingUpstreamConnectionIsUnavailable) {
  upstream_.submit_result = Submitted::kClosing;
  StartCall();
  ClientHeaders(true);
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(observer_.seen.code, StatusCode::kUnavailable);
  EXPECT_EQ(observer_.seen.error_message, "upstream connection is closing");
}

TEST_F(RelayedCallTest, RequestMetadataOverTheLimitIsRefusedWithoutAnUpstreamStream) {
  environment_.max_header_list_bytes = 200;
  RelayedCall& call = StartCall();
  ClientHeaders(true, {{"x-large", std::string(300, 'a')}});

  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  EXPECT_EQ(upstream_.upstream_stream, nullptr);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "8");  // RESOURCE_EXHAUSTED
  EXPECT_EQ(stats_.hits(RelayLimit::kHeaderListSize), 1U);
}

TEST_F(RelayedCallTest, AMessageOverTheLimitIsResourceExhaustedAndResetsTheUpstream) {
  StartCall();
  ClientHeaders(false);
  client().OnData(BytesOf(GrpcMessage(std::string(2048, 'x'))));  // the limit is 1024
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "8");
  ASSERT_EQ(upstream_.resets.size(), 1U);
  EXPECT_EQ(upstream_.resets[0].error_code, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
}

TEST_F(RelayedCallTest, AnUpstreamThatEndsWithoutAStatusIsInternal) {
  RelayedCall& call = StartCall();
  ClientHeaders(true);
  Headers(upstream(), {{":status", "200"}}, false);
  upstream().OnEndOfData();
  EXPECT_EQ(call.response_state(), ResponseState::kTrailersQueued);
  FakeConnection::Pull(client());
  ASSERT_TRUE(downstream_.trailers.has_value());
  EXPECT_EQ(Find(*downstream_.trailers, "grpc-status"), "13");
}

TEST_F(RelayedCallTest, AnHttpErrorStatusFromTheUpstreamIsMappedAsGrpcDoes) {
  StartCall();
  ClientHeaders(true);
  Headers(upstream(), {{":status", "503"}}, true);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "14");  // 503: UNAVAILABLE
  EXPECT_EQ(upstream_.resets.size(), 1U);
}

TEST_F(RelayedCallTest, TheDeadlineEndsTheCallAndResetsTheUpstream) {
  RelayedCall& call = StartCall();
  ClientHeaders(false, {{"grpc-timeout", "1m"}});
  ASSERT_NE(upstream_.upstream_stream, nullptr);
  event_base_loop(base_.get(), EVLOOP_ONCE);  // returns once the 1 ms timer has fired

  EXPECT_EQ(call.response_state(), ResponseState::kTrailersOnlySent);
  ASSERT_EQ(downstream_.responses.size(), 1U);
  EXPECT_EQ(Find(downstream_.responses[0].headers, "grpc-status"), "4");  // DEADLINE_EXCEEDED
  ASSERT_EQ(upstream_.resets.size(), 1U);
  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  client().OnStreamClosed(NGHTTP2_NO_ERROR);
  EXPECT_EQ(observer_.seen.code, StatusCode::kDeadlineExceeded);
}

TEST_F(RelayedCallTest, CancelAtTheEndOfTheDrainResetsBothStreams) {
  RelayedCall& call = StartCall();
  ClientHeaders(false);
  Headers(upstream(), {{":status", "200"}}, false);
  call.Cancel();

  ASSERT_EQ(downstream_.resets.size(), 1U);
  EXPECT_EQ(downstream_.resets[0].stream_id, kClientStreamId);
  EXPECT_EQ(downstream_.resets[0].error_code, static_cast<std::uint32_t>(NGHTTP2_CANCEL));
  EXPECT_EQ(downstream_.detached, 1);
  ASSERT_EQ(upstream_.resets.size(), 1U);
  EXPECT_EQ(upstream_.detached, 1);
  EXPECT_EQ(call.request_state(), RequestState::kClosed);
  EXPECT_EQ(owner_.finished, 1);
  EXPECT_EQ(observer_.seen.code, StatusCode::kCancelled);
  EXPECT_EQ(observer_.seen.error_message, "proxy shutting down: drain timeout reached");
}

TEST_F(RelayedCallTest, ARequestWaitingForTheUpstreamSettingsIsPulledOnceOpened) {
  upstream_.opens_at_once = false;
  StartCall();
  ClientHeaders(false);
  client().OnData(BytesOf(GrpcMessage("early")));
  EXPECT_EQ(upstream_.resumed, 1);  // asked with no stream id yet: only a flush
  upstream().OnOpened(kUpstreamStreamId);
  client().OnEndOfData();
  const FakeConnection::Pulled sent = FakeConnection::Pull(upstream());
  EXPECT_EQ(sent.bytes, GrpcMessage("early"));
  EXPECT_TRUE(sent.end_of_data);
}

TEST_F(RelayedCallTest, ResponseBytesTheClientWillNeverGetGiveTheUpstreamWindowBack) {
  StartCall();
  ClientHeaders(true);
  Headers(upstream(), {{":status", "200"}}, false);
  const std::string response = GrpcMessage("unread");
  upstream().OnData(BytesOf(response));
  EXPECT_EQ(upstream_.consumed, 0U);
  client().OnStreamClosed(NGHTTP2_CANCEL);
  EXPECT_EQ(upstream_.consumed, response.size());
  EXPECT_EQ(owner_.finished, 1);
}

}  // namespace
}  // namespace sparktrace::proxy
