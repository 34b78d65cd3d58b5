#include "tracing/otlp/http_exporter.h"

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/thread.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "tracing/otlp/encoder.h"
#include "tracing/otlp/proto_writer.h"

namespace sparktrace::tracing::otlp {
namespace {

using Clock = SpanExporter::Clock;
using std::chrono::milliseconds;

struct HttpReply {
  int status = 200;
  std::string content_type = "application/x-protobuf";
  std::string retry_after;  // header left out when empty
  std::string body;
  bool hang = false;  // never answer
};

HttpReply Http(int status, std::string content_type = "", std::string retry_after = "",
               std::string body = "") {
  HttpReply reply;
  reply.status = status;
  reply.content_type = std::move(content_type);
  reply.retry_after = std::move(retry_after);
  reply.body = std::move(body);
  return reply;
}

HttpReply HttpHang() {
  HttpReply reply;
  reply.hang = true;
  return reply;
}

struct HttpReceived {
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// An OTLP/HTTP collector stand-in: libevent's evhttp server on 127.0.0.1:<ephemeral>, on its
// own thread, answering each request with the next scripted HttpReply.
class FakeHttpCollector {
 public:
  explicit FakeHttpCollector(std::deque<HttpReply> script, HttpReply otherwise = HttpReply{})
      : script_(std::move(script)), otherwise_(std::move(otherwise)) {
    evthread_use_pthreads();  // the destructor breaks the loop from the test thread
    base_ = event_base_new();
    http_ = evhttp_new(base_);
    evhttp_bound_socket* socket = evhttp_bind_socket_with_handle(http_, "127.0.0.1", 0);
    EXPECT_NE(socket, nullptr);
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    getsockname(evhttp_bound_socket_get_fd(socket), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    evhttp_set_gencb(
        http_,
        [](evhttp_request* request, void* self) { static_cast<FakeHttpCollector*>(self)->Handle(request); },
        this);
    loop_ = std::thread([this] { event_base_dispatch(base_); });
  }
  ~FakeHttpCollector() {
    // loopexit, not loopbreak: a break sent before the loop thread got to dispatch would be lost.
    event_base_loopexit(base_, nullptr);
    loop_.join();
    evhttp_free(http_);
    event_base_free(base_);
  }

  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  std::vector<HttpReceived> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

 private:
  void Handle(evhttp_request* request) {
    HttpReceived call;
    call.method = evhttp_request_get_command(request) == EVHTTP_REQ_POST ? "POST" : "OTHER";
    call.path = evhttp_request_get_uri(request);
    for (evkeyval* header = evhttp_request_get_input_headers(request)->tqh_first; header != nullptr;
         header = header->next.tqe_next) {
      std::string name = header->key;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      call.headers[name] = header->value;
    }
    evbuffer* input = evhttp_request_get_input_buffer(request);
    call.body.resize(evbuffer_get_length(input));
    evbuffer_copyout(input, call.body.data(), call.body.size());
    HttpReply reply;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      received_.push_back(std::move(call));
      if (script_.empty()) {
        reply = otherwise_;
      } else {
        reply = script_.front();
        script_.pop_front();
      }
    }
    if (reply.hang) return;  // freed with the server
    evkeyvalq* headers = evhttp_request_get_output_headers(request);
    if (!reply.content_type.empty()) evhttp_add_header(headers, "Content-Type", reply.content_type.c_str());
    if (!reply.retry_after.empty()) evhttp_add_header(headers, "Retry-After", reply.retry_after.c_str());
    evbuffer* body = evbuffer_new();
    evbuffer_add(body, reply.body.data(), reply.body.size());
    evhttp_send_reply(request, reply.status, "scripted", body);
    evbuffer_free(body);
  }

  std::mutex mutex_;
  std::deque<HttpReply> script_;
  HttpReply otherwise_;
  std::vector<HttpReceived> received_;
  event_base* base_ = nullptr;
  evhttp* http_ = nullptr;
  int port_ = 0;
  std::thread loop_;
};

std::vector<Span> TwoSpans() {
  std::vector<Span> spans(2);
  spans[0].trace_id[0] = 1;
  spans[0].span_id[0] = 1;
  spans[0].name = "a";
  spans[1].trace_id[0] = 1;
  spans[1].span_id[0] = 2;
  spans[1].name = "b";
  return spans;
}

OtlpHttpExporterOptions FastHttpOptions(const std::string& endpoint) {
  OtlpHttpExporterOptions options;
  options.endpoint = endpoint;
  options.timeout = milliseconds(2000);
  options.retry.initial_backoff = milliseconds(1);
  options.retry.max_backoff = milliseconds(5);
  options.resource_attributes = {{"service.name", std::string("sparktrace")}};
  options.scope_version = "9.9.9";
  return options;
}

std::unique_ptr<OtlpHttpExporter> MakeHttpExporter(OtlpHttpExporterOptions options) {
  auto exporter = OtlpHttpExporter::Create(std::move(options));
  EXPECT_TRUE(exporter.ok()) << exporter.error().ToString();
  return exporter.ok() ? std::move(exporter).value() : nullptr;
}

TEST(OtlpHttpExporter, Posts429ThenHonoursRetryAfterAndSucceeds) {
  FakeHttpCollector collector({Http(429, "text/plain", "1", "slow down"), HttpReply{}});
  auto options = FastHttpOptions(collector.host_port());
  options.headers = {{"authorization", "Bearer s3cret"}};
  auto exporter = MakeHttpExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_GE(elapsed, std::chrono::seconds(1));  // Retry-After: 1, although our own backoff is 1-5 ms
  EXPECT_LT(elapsed, std::chrono::seconds(5));

  const auto calls = collector.received();
  ASSERT_EQ(calls.size(), 2u);
  const std::string expected = OtlpEncoder(options.resource_attributes, options.scope_version).Encode(spans);
  for (const auto& call : calls) {
    EXPECT_EQ(call.method, "POST");
    EXPECT_EQ(call.path, "/v1/traces");
    EXPECT_EQ(call.headers.at("content-type"), "application/x-protobuf");
    EXPECT_EQ(call.headers.at("authorization"), "Bearer s3cret");
    EXPECT_EQ(call.headers.at("host"), collector.host_port());
    EXPECT_EQ(call.body, expected);
  }
  EXPECT_EQ(exporter->counters().spans_exported, 2u);
  EXPECT_EQ(exporter->counters().retries, 1u);
}

TEST(OtlpHttpExporter, BadRequestIsNotRetriedAndCarriesTheCollectorsMessage) {
  ProtoWriter status;
  status.Varint(1, 3);                                   // google.rpc.Status.code = INVALID_ARGUMENT
  status.Bytes(2, "span 0102 has an invalid trace id");  // google.rpc.Status.message
  FakeHttpCollector collector({Http(400, "application/x-protobuf", "", status.Release()), HttpReply{}});
  auto exporter = MakeHttpExporter(FastHttpOptions(collector.host_port()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("HTTP 400: span 0102 has an invalid trace id"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(collector.received().size(), 1u);
  EXPECT_EQ(exporter->counters().spans_failed, 2u);
}

TEST(OtlpHttpExporter, ServerErrorWithTextBodyIsFinal) {
  FakeHttpCollector collector({Http(500, "text/plain", "", "boom\nstack"), HttpReply{}});
  auto exporter = MakeHttpExporter(FastHttpOptions(collector.host_port()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("HTTP 500: boom stack"), std::string::npos) << result.error().message;
  EXPECT_EQ(collector.received().size(), 1u);
}

TEST(OtlpHttpExporter, RetriesGatewayErrorsWithBackoff) {
  FakeHttpCollector collector(
      {Http(502, "", "", ""), Http(503, "", "", ""), Http(504, "", "", ""), HttpReply{}});
  auto exporter = MakeHttpExporter(FastHttpOptions(collector.host_port()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  ASSERT_TRUE(exporter->Export(spans, Clock::now() + std::chrono::seconds(10)).ok());
  EXPECT_EQ(collector.received().size(), 4u);
  EXPECT_EQ(exporter->counters().retries, 3u);
}

TEST(OtlpHttpExporter, RetryAfterBeyondTheDeadlineFailsAtOnce) {
  FakeHttpCollector collector({Http(503, "text/plain", "120", "maintenance")});
  auto exporter = MakeHttpExporter(FastHttpOptions(collector.host_port()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, start + std::chrono::seconds(5));
  ASSERT_FALSE(result.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_NE(result.error().message.find("HTTP 503: maintenance"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(collector.received().size(), 1u);
}

TEST(OtlpHttpExporter, PartialSuccessIsCounted) {
  ProtoWriter response;
  response.Message(1, [](ProtoWriter& partial) {  // ExportTraceServiceResponse.partial_success
    partial.Int64(1, 1);                          // rejected_spans
    partial.Bytes(2, "one too old");
  });
  FakeHttpCollector collector({Http(200, "application/x-protobuf", "", response.Release())});
  auto exporter = MakeHttpExporter(FastHttpOptions(collector.host_port()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  ASSERT_TRUE(exporter->Export(spans, Clock::now() + std::chrono::seconds(10)).ok());
  EXPECT_EQ(exporter->counters().spans_exported, 1u);
  EXPECT_EQ(exporter->counters().spans_rejected, 1u);
}

TEST(OtlpHttpExporter, AttemptTimeoutAndDeadlineBoundAHangingCollector) {
  FakeHttpCollector collector({}, HttpHang());
  auto options = FastHttpOptions(collector.host_port());
  options.timeout = milliseconds(300);
  auto exporter = MakeHttpExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, start + milliseconds(1000));
  const auto elapsed = Clock::now() - start;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_GE(elapsed, milliseconds(300));
  EXPECT_LT(elapsed, milliseconds(3000));
  EXPECT_GE(collector.received().size(), 2u);  // timed-out attempts are retried
}

TEST(OtlpHttpExporter, UnreachableCollectorIsRetriedThenReported) {
  int closed_port = 0;
  {
    FakeHttpCollector gone({});
    closed_port = gone.port();
  }
  auto exporter = MakeHttpExporter(FastHttpOptions("127.0.0.1:" + std::to_string(closed_port)));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  auto result = exporter->Export(spans, Clock::now() + milliseconds(300));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  EXPECT_GE(exporter->counters().retries, 1u);
}

TEST(OtlpHttpExporter, UrlEndpointWithItsOwnPath) {
  FakeHttpCollector collector({});
  auto exporter =
      MakeHttpExporter(FastHttpOptions("http://" + collector.host_port() + "/tenant-a/v1/traces"));
  ASSERT_NE(exporter, nullptr);
  const auto spans = TwoSpans();
  ASSERT_TRUE(exporter->Export(spans, Clock::now() + std::chrono::seconds(10)).ok());
  const auto calls = collector.received();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].path, "/tenant-a/v1/traces");
}

TEST(OtlpHttpExporter, CreateRefusesHttpsAndBadHeaders) {
  OtlpHttpExporterOptions options;
  options.endpoint = "https://collector:4318";
  EXPECT_FALSE(OtlpHttpExporter::Create(options).ok());
  options.endpoint = "collector:4318";
  options.headers = {{"content-type", "text/plain"}};
  EXPECT_FALSE(OtlpHttpExporter::Create(options).ok());
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
