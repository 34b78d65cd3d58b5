#include "tracing/otlp/http_exporter.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/time.h>

#include <algorithm>
#include <optional>
#include <random>

#include "tracing/otlp/encoder.h"
#include "tracing/otlp/endpoint.h"
#include "tracing/otlp/export_counters.h"
#include "tracing/otlp/response.h"
#include "tracing/otlp/retrier.h"

namespace sparktrace::tracing::otlp {
namespace {

constexpr char kProtobufContentType[] = "application/x-protobuf";
// A collector's answer is a small protobuf or an error text; anything bigger is not one.
constexpr ev_ssize_t kMaxResponseBody = 4 << 20;
// How much of an error body goes into our error message.
constexpr std::size_t kMaxErrorText = 300;

struct EventBaseDeleter {
  void operator()(event_base* base) const { event_base_free(base); }
};
struct ConnectionDeleter {
  void operator()(evhttp_connection* connection) const { evhttp_connection_free(connection); }
};
struct EventDeleter {
  void operator()(event* timer) const { event_free(timer); }
};

const char* RequestErrorName(evhttp_request_error error) {
  switch (error) {
    case EVREQ_HTTP_TIMEOUT:
      return "timed out";
    case EVREQ_HTTP_EOF:
      // Also what libevent reports for a refused connection or an unresolvable host.
      return "could not connect, or the connection closed before the response";
    case EVREQ_HTTP_INVALID_HEADER:
      return "invalid response header";
    case EVREQ_HTTP_BUFFER_ERROR:
      return "connection failed";
    case EVREQ_HTTP_REQUEST_CANCEL:
      return "request cancelled";
    case EVREQ_HTTP_DATA_TOO_LONG:
      return "response body too large";
  }
  return "request failed";
}

// What one attempt saw; filled by libevent's callbacks on this thread.
struct AttemptState {
  event_base* base = nullptr;
  bool finished = false;
  bool timed_out = false;
  std::optional<evhttp_request_error> error;
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;
};

std::string Header(evhttp_request* request, const char* name) {
  const char* value = evhttp_find_header(evhttp_request_get_input_headers(request), name);
  return value != nullptr ? std::string(value) : std::string();
}

void OnResponse(evhttp_request* request, void* arg) {
  auto* state = static_cast<AttemptState*>(arg);
  state->finished = true;
  // libevent reports a failed connection with no request, or one without a status.
  if (request != nullptr && evhttp_request_get_response_code(request) != 0) {
    state->status = evhttp_request_get_response_code(request);
    evbuffer* input = evhttp_request_get_input_buffer(request);
    state->body.resize(evbuffer_get_length(input));
    evbuffer_copyout(input, state->body.data(), state->body.size());
    state->content_type = Header(request, "Content-Type");
    state->retry_after = Header(request, "Retry-After");
  }
  event_base_loopbreak(state->base);
}

void OnRequestError(evhttp_request_error error, void* arg) { static_cast<AttemptState*>(arg)->error = error; }

void OnAttemptTimeout(evutil_socket_t /*fd*/, short /*events*/, void* arg) {
  auto* state = static_cast<AttemptState*>(arg);
  state->timed_out = true;
  event_base_loopbreak(state->base);
}

timeval ToTimeval(std::chrono::nanoseconds duration) {
  duration = std::max(duration, std::chrono::nanoseconds(0));
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(duration);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(duration - seconds);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(seconds.count());
  tv.tv_usec = static_cast<suseconds_t>(micros.count());
  return tv;
}

// The collector's reason: a google.rpc.Status when it sent protobuf (OTLP/HTTP spec), else its text.
std::string ErrorText(const AttemptState& state) {
  std::string text = state.body;
  if (state.content_type.find(kProtobufContentType) != std::string::npos) {
    auto status = ParseRpcStatus(state.body);
    if (status.ok()) text = status->message;
  }
  if (text.size() > kMaxErrorText) text = text.substr(0, kMaxErrorText) + "...";
  std::replace_if(
      text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

struct OtlpHttpExporter::Impl {
  Impl(OtlpHttpExporterOptions opts, OtlpEndpoint endpoint_in,
       std::unique_ptr<event_base, EventBaseDeleter> base_in)
      : options(std::move(opts)),
        endpoint(std::move(endpoint_in)),
        url("http://" + HostHeader() + endpoint.path),
        encoder(options.resource_attributes, options.scope_version),
        base(std::move(base_in)),
        retrier(options.retry, options.timeout, std::random_device{}()),
        counters(url) {}

  std::string HostHeader() const {
    const std::string host =
        endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host;
    return host + ":" + std::to_string(endpoint.port);
  }

  OtlpAttemptOutcome Attempt(const std::string& body, std::size_t span_count,
                             std::chrono::steady_clock::time_point attempt_deadline);

  const OtlpHttpExporterOptions options;
  const OtlpEndpoint endpoint;
  const std::string url;
  const OtlpEncoder encoder;
  std::unique_ptr<event_base, EventBaseDeleter> base;  // exporter thread only
  OtlpRetrier retrier;
  OtlpExportCounters counters;
};

OtlpAttemptOutcome OtlpHttpExporter::Impl::Attempt(const std::string& body, std::size_t span_count,
                                                   std::chrono::steady_clock::time_point attempt_deadline) {
  const std::string prefix = "OTLP/HTTP export to " + url + ": ";
  AttemptState state;
  state.base = base.get();
  const timeval remaining = ToTimeval(attempt_deadline - std::chrono::steady_clock::now());

  // Host names resolve with a blocking getaddrinfo() here (no evdns base): fine on the exporter
  // thread, and the attempt timer below still bounds everything after it.
  std::unique_ptr<evhttp_connection, ConnectionDeleter> connection(
      evhttp_connection_base_new(base.get(), nullptr, endpoint.host.c_str(), endpoint.port));
  if (!connection)
    return OtlpAttemptOutcome::Retry(Error{ErrorCode::kUnavailable, prefix + "cannot create a connection"});
  evhttp_connection_set_timeout_tv(connection.get(), &remaining);
  evhttp_connection_set_max_body_size(connection.get(), kMaxResponseBody);

  // Owned by the connection once made; freed by libevent after OnResponse, or with the connection.
  evhttp_request* request = evhttp_request_new(OnResponse, &state);
  if (request == nullptr)
    return OtlpAttemptOutcome::Fail(Error{ErrorCode::kInternal, prefix + "evhttp_request_new failed"});
  evhttp_request_set_error_cb(request, OnRequestError);
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  evhttp_add_header(headers, "Host", HostHeader().c_str());
  evhttp_add_header(headers, "Content-Type", kProtobufContentType);
  evhttp_add_header(headers, "User-Agent", "sparktrace-otlp");
  for (const auto& [key, value] : options.headers) evhttp_add_header(headers, key.c_str(), value.c_str());
  evbuffer_add(evhttp_request_get_output_buffer(request), body.data(), body.size());
  if (evhttp_make_request(connection.get(), request, EVHTTP_REQ_POST, endpoint.path.c_str()) != 0) {
    // On failure libevent has already freed the request.
    return OtlpAttemptOutcome::Retry(Error{ErrorCode::kUnavailable, prefix + "cannot start the request"});
  }

  // Whatever libevent's own timeouts do, the attempt ends at its deadline.
  std::unique_ptr<event, EventDeleter> timer(evtimer_new(base.get(), OnAttemptTimeout, &state));
  if (!timer || evtimer_add(timer.get(), &remaining) != 0) {
    return OtlpAttemptOutcome::Fail(Error{ErrorCode::kInternal, prefix + "cannot arm the attempt timer"});
  }
  while (!state.finished && !state.timed_out) {
    if (event_base_dispatch(base.get()) < 0) break;
  }
  timer.reset();
  connection.reset();  // also drops a request still pending after a timeout, without calling back

  if (!state.finished || state.timed_out) {
    return OtlpAttemptOutcome::Retry(Error{ErrorCode::kUnavailable, prefix + "timed out"});
  }
  if (state.status == 0) {
    const std::string reason = state.error ? RequestErrorName(*state.error) : "connection failed";
    return OtlpAttemptOutcome::Retry(Error{ErrorCode::kUnavailable, prefix + reason});
  }
  if (state.status >= 200 && state.status < 300) {
    auto partial = ParseExportTraceServiceResponse(
        state.content_type.find(kProtobufContentType) != std::string::npos ? state.body : std::string());
    counters.NoteAccepted(partial.ok() ? *partial : OtlpPartialSuccess{}, span_count);
    return OtlpAttemptOutcome::Done();
  }
  const std::string text = ErrorText(state);
  Error error{state.status == 400 ? ErrorCode::kInvalidArgument : ErrorCode::kUnavailable,
              prefix + "HTTP " + std::to_string(state.status) + (text.empty() ? "" : ": " + text)};
  if (IsRetryableHttpStatus(state.status)) {
    return OtlpAttemptOutcome::Retry(std::move(error),
                                     ParseRetryAfter(state.retry_after, std::chrono::system_clock::now()));
  }
  return OtlpAttemptOutcome::Fail(std::move(error));
}

Result<std::unique_ptr<OtlpHttpExporter>> OtlpHttpExporter::Create(OtlpHttpExporterOptions options) {
  auto endpoint = ParseOtlpHttpEndpoint(options.endpoint);
  if (!endpoint.ok()) return endpoint.error();
  if (auto headers = ValidateOtlpHeaders(options.headers); !headers.ok()) return headers.error();
  if (options.timeout <= std::chrono::milliseconds(0))
    return InvalidArgument("OTLP timeout must be positive");
  std::unique_ptr<event_base, EventBaseDeleter> base(event_base_new());
  if (!base) return Error{ErrorCode::kInternal, "libevent: event_base_new failed"};
  return std::make_unique<OtlpHttpExporter>(
      std::make_unique<Impl>(std::move(options), std::move(*endpoint), std::move(base)));
}

OtlpHttpExporter::OtlpHttpExporter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

OtlpHttpExporter::~OtlpHttpExporter() = default;

Result<void> OtlpHttpExporter::Export(std::span<const Span> spans, Clock::time_point deadline) {
  if (spans.empty()) return {};
  const std::string body = impl_->encoder.Encode(spans);
  auto result = impl_->retrier.Run(deadline, [&](Clock::time_point attempt_deadline) {
    return impl_->Attempt(body, spans.size(), attempt_deadline);
  });
  if (!result.ok()) impl_->counters.NoteFailed(spans.size());
  return result;
}

void OtlpHttpExporter::Shutdown() { impl_->retrier.Cancel(); }

SpanExporterCounters OtlpHttpExporter::counters() const {
  return impl_->counters.Snapshot(impl_->retrier.retries());
}

}  // namespace sparktrace::tracing::otlp
