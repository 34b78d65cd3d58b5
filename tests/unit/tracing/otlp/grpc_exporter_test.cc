#include "tracing/otlp/grpc_exporter.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

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

// One scripted answer of the fake collector.
struct Reply {
  grpc::StatusCode code = grpc::StatusCode::OK;
  std::string message;
  std::string details;   // serialized google.rpc.Status for grpc-status-details-bin
  std::string response;  // ExportTraceServiceResponse bytes for OK
  bool hang = false;     // answer only when the client gives up
};

Reply Answer(grpc::StatusCode code, std::string message, std::string details = "") {
  Reply reply;
  reply.code = code;
  reply.message = std::move(message);
  reply.details = std::move(details);
  return reply;
}

Reply Ok(std::string response = "") {
  Reply reply;
  reply.response = std::move(response);
  return reply;
}

Reply Hang() {
  Reply reply;
  reply.hang = true;
  return reply;
}

struct Received {
  std::string method;
  std::string body;
  std::multimap<std::string, std::string> metadata;
  std::chrono::system_clock::duration time_left{};
};

std::string ToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  EXPECT_TRUE(buffer.Dump(&slices).ok());
  for (const auto& slice : slices) out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return out;
}

// An OTLP collector stand-in on 127.0.0.1:<ephemeral>: the generic callback API, so it sees the
// raw request bytes and metadata, answering each call with the next scripted Reply.
class FakeCollector final : public grpc::CallbackGenericService {
 public:
  explicit FakeCollector(std::deque<Reply> script, Reply otherwise = Ok())
      : script_(std::move(script)), otherwise_(std::move(otherwise)) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterCallbackGenericService(this);
    server_ = builder.BuildAndStart();
  }
  ~FakeCollector() override {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    server_->Wait();
  }

  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

  std::vector<Received> received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

  // Blocks until `count` calls have arrived (the test's synchronisation; no sleeps).
  void WaitForCalls(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    arrived_.wait(lock, [&] { return received_.size() >= count; });
  }

 private:
  class Reactor final : public grpc::ServerGenericBidiReactor {
   public:
    Reactor(FakeCollector* owner, grpc::GenericCallbackServerContext* context)
        : owner_(owner), context_(context) {
      StartRead(&request_);
    }
    void OnReadDone(bool ok) override {
      if (!ok) {
        Finish(grpc::Status(grpc::StatusCode::INTERNAL, "no request"));
        return;
      }
      const Reply reply = owner_->Record(context_, ToString(request_));
      bool cancelled_already = false;
      {
        // Record has woken the test, which may cancel at once: OnCancel can run on another
        // thread before this line, so which of the two finishes a hanging call is decided here.
        std::lock_guard<std::mutex> lock(mutex_);
        reply_ = reply;
        if (reply_.hang) {
          cancelled_already = cancelled_;
          hanging_ = !cancelled_;
        }
      }
      if (reply_.hang) {
        if (cancelled_already) Finish(grpc::Status::CANCELLED);
        return;  // otherwise OnCancel finishes
      }
      if (reply_.code != grpc::StatusCode::OK) {
        Finish(grpc::Status(reply_.code, reply_.message, reply_.details));
        return;
      }
      grpc::Slice slice(reply_.response);
      response_ = grpc::ByteBuffer(&slice, 1);
      StartWrite(&response_);
    }
    void OnWriteDone(bool /*ok*/) override { Finish(grpc::Status::OK); }
    void OnCancel() override {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        cancelled_ = true;
        if (!hanging_) return;
        hanging_ = false;
      }
      Finish(grpc::Status::CANCELLED);
    }
    void OnDone() override {}

   private:
    FakeCollector* owner_;
    grpc::GenericCallbackServerContext* context_;
    grpc::ByteBuffer request_;
    grpc::ByteBuffer response_;
    Reply reply_;
    std::mutex mutex_;
    bool cancelled_ = false;  // guarded by mutex_
    bool hanging_ = false;    // guarded by mutex_: waiting for OnCancel to finish the call
  };

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override {
    std::lock_guard<std::mutex> lock(mutex_);
    reactors_.push_back(std::make_unique<Reactor>(this, context));
    return reactors_.back().get();
  }

  Reply Record(grpc::GenericCallbackServerContext* context, std::string body) {
    Received call;
    call.method = context->method();
    call.body = std::move(body);
    for (const auto& [key, value] : context->client_metadata()) {
      call.metadata.emplace(std::string(key.data(), key.size()), std::string(value.data(), value.size()));
    }
    call.time_left = context->deadline() - std::chrono::system_clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    received_.push_back(std::move(call));
    arrived_.notify_all();
    if (script_.empty()) return otherwise_;
    Reply reply = script_.front();
    script_.pop_front();
    return reply;
  }

  std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Reply> script_;
  Reply otherwise_;
  std::vector<Received> received_;
  std::vector<std::unique_ptr<Reactor>> reactors_;  // kept until the server is gone
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

std::vector<Span> ThreeSpans() {
  std::vector<Span> spans(3);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    spans[i].trace_id[0] = 1;
    spans[i].span_id[0] = static_cast<std::uint8_t>(i + 1);
    spans[i].name = "span-" + std::to_string(i);
  }
  return spans;
}

OtlpGrpcExporterOptions FastGrpcOptions(const std::string& endpoint) {
  OtlpGrpcExporterOptions options;
  options.endpoint = endpoint;
  options.timeout = milliseconds(2000);
  options.retry.initial_backoff = milliseconds(1);
  options.retry.max_backoff = milliseconds(5);
  options.resource_attributes = {{"service.name", std::string("sparktrace")}};
  options.scope_version = "9.9.9";
  return options;
}

std::unique_ptr<OtlpGrpcExporter> MakeGrpcExporter(OtlpGrpcExporterOptions options) {
  auto exporter = OtlpGrpcExporter::Create(std::move(options));
  EXPECT_TRUE(exporter.ok()) << exporter.error().ToString();
  return exporter.ok() ? std::move(exporter).value() : nullptr;
}

std::string RetryInfoDetails(int code, std::chrono::milliseconds delay) {
  ProtoWriter status;
  status.Varint(1, static_cast<std::uint64_t>(code));  // google.rpc.Status.code
  status.Bytes(2, "collector busy");                   // google.rpc.Status.message
  status.Message(3, [&](ProtoWriter& any) {            // google.rpc.Status.details
    any.Bytes(1, "type.googleapis.com/google.rpc.RetryInfo");
    ProtoWriter retry_info;
    retry_info.Message(1, [&](ProtoWriter& duration) {  // RetryInfo.retry_delay
      const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(delay);
      if (seconds.count() != 0) duration.Int64(1, seconds.count());          // Duration.seconds
      duration.Int64(2, std::chrono::nanoseconds(delay - seconds).count());  // Duration.nanos (< 1 s)
    });
    any.Bytes(2, retry_info.bytes());
  });
  return status.Release();
}

TEST(OtlpGrpcExporter, RetriesUnavailableThenSucceedsWithTheEncodedRequest) {
  FakeCollector collector({Answer(grpc::StatusCode::UNAVAILABLE, "starting"),
                           Answer(grpc::StatusCode::UNAVAILABLE, "starting"), Ok()});
  auto options = FastGrpcOptions(collector.endpoint());
  auto exporter = MakeGrpcExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();

  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(result.ok()) << result.error().ToString();

  const auto calls = collector.received();
  ASSERT_EQ(calls.size(), 3u);
  const std::string expected = OtlpEncoder(options.resource_attributes, options.scope_version).Encode(spans);
  for (const auto& call : calls) {
    EXPECT_EQ(call.method, "/opentelemetry.proto.collector.trace.v1.TraceService/Export");
    EXPECT_EQ(call.body, expected);
  }
  const auto counters = exporter->counters();
  EXPECT_EQ(counters.spans_exported, 3u);
  EXPECT_EQ(counters.spans_failed, 0u);
  EXPECT_EQ(counters.retries, 2u);
}

TEST(OtlpGrpcExporter, SendsHeadersAsMetadata) {
  FakeCollector collector({});
  auto options = FastGrpcOptions(collector.endpoint());
  options.headers = {{"authorization", "Bearer s3cret"}, {"x-scope-orgid", "tenant-7"}};
  auto exporter = MakeGrpcExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  ASSERT_TRUE(exporter->Export(spans, Clock::now() + std::chrono::seconds(10)).ok());
  const auto calls = collector.received();
  ASSERT_EQ(calls.size(), 1u);
  auto find = [&](const std::string& key) {
    auto it = calls[0].metadata.find(key);
    return it == calls[0].metadata.end() ? std::string("<missing>") : it->second;
  };
  EXPECT_EQ(find("authorization"), "Bearer s3cret");
  EXPECT_EQ(find("x-scope-orgid"), "tenant-7");
}

TEST(OtlpGrpcExporter, ResourceExhaustedWithoutRetryInfoIsFinal) {
  FakeCollector collector({Answer(grpc::StatusCode::RESOURCE_EXHAUSTED, "quota"), Ok()});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("RESOURCE_EXHAUSTED: quota"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(collector.received().size(), 1u);
  EXPECT_EQ(exporter->counters().spans_failed, 3u);
}

TEST(OtlpGrpcExporter, ResourceExhaustedWithRetryInfoWaitsTheServersDelay) {
  const auto delay = milliseconds(300);
  FakeCollector collector(
      {Answer(grpc::StatusCode::RESOURCE_EXHAUSTED, "busy", RetryInfoDetails(8, delay)), Ok()});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));  // own backoff is 1-5 ms
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(collector.received().size(), 2u);
  EXPECT_GE(elapsed, delay);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(OtlpGrpcExporter, RetryInfoBeyondTheDeadlineFailsAtOnce) {
  FakeCollector collector(
      {Answer(grpc::StatusCode::UNAVAILABLE, "later", RetryInfoDetails(14, milliseconds(5000)))});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, start + std::chrono::seconds(2));
  ASSERT_FALSE(result.ok());
  // Neither the 5 s the collector asked for nor the 2 s to the deadline were waited out.
  EXPECT_LT(Clock::now() - start, milliseconds(1500));
  EXPECT_EQ(collector.received().size(), 1u);
}

TEST(OtlpGrpcExporter, InvalidArgumentIsNotRetried) {
  FakeCollector collector({Answer(grpc::StatusCode::INVALID_ARGUMENT, "bad span"), Ok()});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(result.error().message.find("INVALID_ARGUMENT: bad span"), std::string::npos)
      << result.error().message;
  EXPECT_EQ(collector.received().size(), 1u);
  EXPECT_EQ(exporter->counters().retries, 0u);
}

TEST(OtlpGrpcExporter, PartialSuccessIsCountedAndNotRetried) {
  ProtoWriter response;
  response.Message(1, [](ProtoWriter& partial) {  // ExportTraceServiceResponse.partial_success
    partial.Int64(1, 2);                          // rejected_spans
    partial.Bytes(2, "2 spans too old");          // error_message
  });
  FakeCollector collector({Ok(response.Release())});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  ASSERT_TRUE(exporter->Export(spans, Clock::now() + std::chrono::seconds(10)).ok());
  EXPECT_EQ(collector.received().size(), 1u);
  const auto counters = exporter->counters();
  EXPECT_EQ(counters.spans_exported, 1u);
  EXPECT_EQ(counters.spans_rejected, 2u);
}

TEST(OtlpGrpcExporter, EachAttemptCarriesTheTimeoutAsItsDeadline) {
  FakeCollector collector({Hang(), Ok()});
  auto options = FastGrpcOptions(collector.endpoint());
  options.timeout = milliseconds(400);
  auto exporter = MakeGrpcExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(result.ok()) << result.error().ToString();  // DEADLINE_EXCEEDED is retried
  EXPECT_GE(Clock::now() - start, milliseconds(400));
  const auto calls = collector.received();
  ASSERT_EQ(calls.size(), 2u);
  for (const auto& call : calls) {
    EXPECT_GT(call.time_left, milliseconds(0));
    EXPECT_LE(call.time_left, milliseconds(400 + 150));  // gRPC rounds deadlines up a little
  }
}

TEST(OtlpGrpcExporter, ExportDeadlineBoundsTheRetries) {
  FakeCollector collector({}, Answer(grpc::StatusCode::UNAVAILABLE, "down"));
  auto options = FastGrpcOptions(collector.endpoint());
  options.retry.initial_backoff = milliseconds(20);
  options.retry.max_backoff = milliseconds(40);
  auto exporter = MakeGrpcExporter(options);
  ASSERT_NE(exporter, nullptr);
  const auto spans = ThreeSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, start + milliseconds(500));
  const auto elapsed = Clock::now() - start;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::kUnavailable);
  // The last attempt may also have run into the deadline itself (DEADLINE_EXCEEDED).
  EXPECT_EQ(result.error().message.rfind("OTLP/gRPC export to " + collector.endpoint(), 0), 0u)
      << result.error().message;
  EXPECT_LT(elapsed, milliseconds(2500));
  EXPECT_GE(collector.received().size(), 2u);
}

TEST(OtlpGrpcExporter, ShutdownCancelsTheCallInFlight) {
  FakeCollector collector({}, Hang());
  auto options = FastGrpcOptions(collector.endpoint());
  options.timeout = std::chrono::seconds(60);
  auto exporter = MakeGrpcExporter(options);
  ASSERT_NE(exporter, nullptr);
  std::thread stopper([&] {
    collector.WaitForCalls(1);
    exporter->Shutdown();
  });
  const auto spans = ThreeSpans();
  const auto start = Clock::now();
  auto result = exporter->Export(spans, Clock::now() + std::chrono::seconds(60));
  stopper.join();
  ASSERT_FALSE(result.ok());
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(20));
  EXPECT_FALSE(exporter->Export(spans, Clock::now() + std::chrono::seconds(1)).ok());
  EXPECT_EQ(collector.received().size(), 1u);
}

TEST(OtlpGrpcExporter, CreateChecksItsOptions) {
  OtlpGrpcExporterOptions options;
  options.endpoint = "http://collector:4317";
  EXPECT_FALSE(OtlpGrpcExporter::Create(options).ok());
  options.endpoint = "collector:4317";
  options.headers = {{"Bad Key", "v"}};
  EXPECT_FALSE(OtlpGrpcExporter::Create(options).ok());
  options.headers = {};
  options.ca_file = "/nonexistent/ca.pem";
  EXPECT_FALSE(OtlpGrpcExporter::Create(options).ok());  // CA file without TLS
  options.use_tls = true;
  auto missing_ca = OtlpGrpcExporter::Create(options);
  ASSERT_FALSE(missing_ca.ok());
  EXPECT_EQ(missing_ca.error().code, ErrorCode::kIo);
  options.ca_file = "";
  EXPECT_TRUE(OtlpGrpcExporter::Create(options).ok());
}

TEST(OtlpGrpcExporter, EmptyBatchSendsNothing) {
  FakeCollector collector({});
  auto exporter = MakeGrpcExporter(FastGrpcOptions(collector.endpoint()));
  ASSERT_NE(exporter, nullptr);
  EXPECT_TRUE(exporter->Export({}, Clock::now() + std::chrono::seconds(1)).ok());
  EXPECT_TRUE(collector.received().empty());
}

}  // namespace
}  // namespace sparktrace::tracing::otlp
