#include "tracing/otlp/grpc_exporter.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "tracing/otlp/encoder.h"
#include "tracing/otlp/endpoint.h"
#include "tracing/otlp/export_counters.h"
#include "tracing/otlp/response.h"
#include "tracing/otlp/retrier.h"

namespace sparktrace::tracing::otlp {
namespace {

// trace_service.proto: package opentelemetry.proto.collector.trace.v1, service TraceService, rpc Export.
constexpr char kExportMethod[] = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

std::string ToString(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const grpc::Slice& slice : slices)
    out.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  return out;
}

std::chrono::system_clock::time_point ToSystemClock(std::chrono::steady_clock::time_point at) {
  return std::chrono::system_clock::now() + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                                at - std::chrono::steady_clock::now());
}

}  // namespace

struct OtlpGrpcExporter::Impl {
  Impl(OtlpGrpcExporterOptions opts, std::shared_ptr<grpc::Channel> channel)
      : options(std::move(opts)),
        encoder(options.resource_attributes, options.scope_version),
        stub(std::move(channel)),
        retrier(options.retry, options.timeout, std::random_device{}()),
        counters(options.endpoint) {}

  OtlpAttemptOutcome Attempt(const grpc::ByteBuffer& request, std::size_t span_count,
                             std::chrono::steady_clock::time_point attempt_deadline);

  const OtlpGrpcExporterOptions options;
  const OtlpEncoder encoder;
  grpc::GenericStub stub;  // owns the channel
  OtlpRetrier retrier;
  OtlpExportCounters counters;

  // The call in flight, so Shutdown() from another thread can cancel it.
  std::mutex call_mutex;
  grpc::ClientContext* call_in_flight = nullptr;  // guarded by call_mutex
  bool shut_down = false;                         // guarded by call_mutex
};

OtlpAttemptOutcome OtlpGrpcExporter::Impl::Attempt(const grpc::ByteBuffer& request, std::size_t span_count,
                                                   std::chrono::steady_clock::time_point attempt_deadline) {
  grpc::ClientContext context;
  context.set_deadline(ToSystemClock(attempt_deadline));
  for (const auto& [key, value] : options.headers) context.AddMetadata(key, value);
  {
    std::lock_guard<std::mutex> lock(call_mutex);
    if (shut_down) return OtlpAttemptOutcome::Fail(Error{ErrorCode::kUnavailable, "exporter is shut down"});
    call_in_flight = &context;
  }

  grpc::ByteBuffer response;
  std::mutex done_mutex;
  std::condition_variable done_cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&context, kExportMethod, grpc::StubOptions(), &request, &response, [&](grpc::Status result) {
    std::lock_guard<std::mutex> lock(done_mutex);
    status = std::move(result);
    done = true;
    done_cv.notify_one();
  });
  {
    // gRPC always completes the call (at the latest at its deadline), so this wait is bounded.
    std::unique_lock<std::mutex> lock(done_mutex);
    done_cv.wait(lock, [&] { return done; });
  }
  {
    std::lock_guard<std::mutex> lock(call_mutex);
    call_in_flight = nullptr;
  }

  if (status.ok()) {
    auto partial = ParseExportTraceServiceResponse(ToString(response));
    if (!partial.ok()) {
      // The spans were accepted; only the advisory part of the answer is unreadable.
      spdlog::warn("OTLP collector {}: unreadable ExportTraceServiceResponse ({})", options.endpoint,
                   partial.error().message);
      counters.NoteAccepted(OtlpPartialSuccess{}, span_count);
    } else {
      counters.NoteAccepted(*partial, span_count);
    }
    return OtlpAttemptOutcome::Done();
  }

  std::optional<std::chrono::nanoseconds> retry_delay;
  if (!status.error_details().empty()) {
    if (auto details = ParseRpcStatus(status.error_details()); details.ok())
      retry_delay = details->retry_delay;
  }
  const int code = static_cast<int>(status.error_code());
  Error error{status.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? ErrorCode::kInvalidArgument
                                                                        : ErrorCode::kUnavailable,
              "OTLP/gRPC export to " + options.endpoint + ": " + CodeName(status.error_code()) +
                  (status.error_message().empty() ? "" : ": " + status.error_message())};
  if (IsRetryableGrpcCode(code, retry_delay.has_value()))
    return OtlpAttemptOutcome::Retry(std::move(error), retry_delay);
  return OtlpAttemptOutcome::Fail(std::move(error));
}

Result<std::unique_ptr<OtlpGrpcExporter>> OtlpGrpcExporter::Create(OtlpGrpcExporterOptions options) {
  auto endpoint = ParseOtlpGrpcEndpoint(options.endpoint);
  if (!endpoint.ok()) return endpoint.error();
  if (auto headers = ValidateOtlpHeaders(options.headers); !headers.ok()) return headers.error();
  if (options.timeout <= std::chrono::milliseconds(0))
    return InvalidArgument("OTLP timeout must be positive");

  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.use_tls) {
    grpc::SslCredentialsOptions ssl;
    if (!options.ca_file.empty()) {
      std::ifstream file(options.ca_file, std::ios::binary);
      std::ostringstream pem;
      pem << file.rdbuf();
      if (!file || pem.str().empty())
        return Error{ErrorCode::kIo, "cannot read OTLP CA file " + options.ca_file};
      ssl.pem_root_certs = pem.str();
    }
    credentials = grpc::SslCredentials(ssl);
  } else {
    if (!options.ca_file.empty()) return InvalidArgument("OTLP CA file given but TLS is off");
    credentials = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments arguments;
  arguments.SetUserAgentPrefix("sparktrace-otlp");
  // Our own retry loop follows the OTLP rules; gRPC's would retry underneath it.
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  auto channel = grpc::CreateCustomChannel(options.endpoint, credentials, arguments);
  return std::make_unique<OtlpGrpcExporter>(std::make_unique<Impl>(std::move(options), std::move(channel)));
}

OtlpGrpcExporter::OtlpGrpcExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OtlpGrpcExporter::~OtlpGrpcExporter() = default;

Result<void> OtlpGrpcExporter::Export(std::span<const Span> spans, Clock::time_point deadline) {
  if (spans.empty()) return {};
  const std::string encoded = impl_->encoder.Encode(spans);
  grpc::Slice slice(encoded);
  const grpc::ByteBuffer request(&slice, 1);
  auto result = impl_->retrier.Run(deadline, [&](Clock::time_point attempt_deadline) {
    return impl_->Attempt(request, spans.size(), attempt_deadline);
  });
  if (!result.ok()) impl_->counters.NoteFailed(spans.size());
  return result;
}

void OtlpGrpcExporter::Shutdown() {
  impl_->retrier.Cancel();
  std::lock_guard<std::mutex> lock(impl_->call_mutex);
  impl_->shut_down = true;
  if (impl_->call_in_flight != nullptr) impl_->call_in_flight->TryCancel();
}

SpanExporterCounters OtlpGrpcExporter::counters() const {
  return impl_->counters.Snapshot(impl_->retrier.retries());
}

}  // namespace sparktrace::tracing::otlp
