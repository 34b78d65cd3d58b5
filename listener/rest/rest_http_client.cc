#include "listener/rest/rest_http_client.h"

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <sys/time.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace sparktrace::listener::rest {
namespace {

// How much of an error body goes into a message: Spark's error pages are HTML, the head says enough.
constexpr std::size_t kMaxErrorText = 200;

struct EventBaseDeleter {
  void operator()(event_base* base) const { event_base_free(base); }
};
struct ConnectionDeleter {
  void operator()(evhttp_connection* connection) const { evhttp_connection_free(connection); }
};
struct EventDeleter {
  void operator()(event* timer) const { event_free(timer); }
};

// What one request saw; filled by libevent's callbacks on the calling thread.
struct RequestState {
  event_base* base = nullptr;
  bool finished = false;
  bool timed_out = false;
  std::optional<evhttp_request_error> error;
  int status = 0;
  std::string body;
};

void OnResponse(evhttp_request* request, void* arg) {
  auto* state = static_cast<RequestState*>(arg);
  state->finished = true;
  // libevent reports a failed connection (and an oversized body) with no request.
  if (request != nullptr && evhttp_request_get_response_code(request) != 0) {
    state->status = evhttp_request_get_response_code(request);
    evbuffer* input = evhttp_request_get_input_buffer(request);
    state->body.resize(evbuffer_get_length(input));
    evbuffer_copyout(input, state->body.data(), state->body.size());
  }
  event_base_loopbreak(state->base);
}

void OnRequestError(evhttp_request_error error, void* arg) { static_cast<RequestState*>(arg)->error = error; }

void OnTimeout(evutil_socket_t /*fd*/, short /*events*/, void* arg) {
  auto* state = static_cast<RequestState*>(arg);
  state->timed_out = true;
  event_base_loopbreak(state->base);
}

timeval ToTimeval(std::chrono::milliseconds duration) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(duration.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((duration.count() % 1000) * 1000);
  return tv;
}

// The head of an error body, on one line.
std::string ErrorText(std::string text) {
  if (text.size() > kMaxErrorText) text = text.substr(0, kMaxErrorText) + "...";
  std::replace_if(
      text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }, ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

FetchResult Failure(FetchOutcome outcome, std::string message, int status = 0) {
  FetchResult result;
  result.outcome = outcome;
  result.http_status = status;
  result.error = std::move(message);
  return result;
}

}  // namespace

std::string_view FetchOutcomeName(FetchOutcome outcome) {
  switch (outcome) {
    case FetchOutcome::kOk:
      return "ok";
    case FetchOutcome::kUnreachable:
      return "unreachable";
    case FetchOutcome::kTimedOut:
      return "timed_out";
    case FetchOutcome::kHttpError:
      return "http_error";
    case FetchOutcome::kTooLarge:
      return "too_large";
  }
  return "unknown";
}

struct RestHttpClient::Impl {
  Impl(SparkUiEndpoint endpoint_in, RestHttpClientOptions options_in,
       std::unique_ptr<event_base, EventBaseDeleter> base_in)
      : endpoint(std::move(endpoint_in)),
        options(options_in),
        base_url("http://" + endpoint.Authority() + endpoint.path_prefix),
        base(std::move(base_in)) {}

  const SparkUiEndpoint endpoint;
  const RestHttpClientOptions options;
  const std::string base_url;
  std::unique_ptr<event_base, EventBaseDeleter> base;
};

Result<std::unique_ptr<RestHttpClient>> RestHttpClient::Create(SparkUiEndpoint endpoint,
                                                               RestHttpClientOptions options) {
  if (options.timeout <= std::chrono::milliseconds(0))
    return InvalidArgument("REST request timeout must be positive");
  if (options.max_response_bytes == 0) return InvalidArgument("REST max response bytes must be positive");
  std::unique_ptr<event_base, EventBaseDeleter> base(event_base_new());
  if (!base) return Error{ErrorCode::kInternal, "libevent: event_base_new failed"};
  return std::make_unique<RestHttpClient>(
      std::make_unique<Impl>(std::move(endpoint), options, std::move(base)));
}

RestHttpClient::RestHttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestHttpClient::~RestHttpClient() = default;

const std::string& RestHttpClient::base_url() const { return impl_->base_url; }

FetchResult RestHttpClient::Get(std::string_view path) {
  const std::string target = impl_->endpoint.path_prefix + std::string(path);
  const std::string prefix = "GET " + impl_->base_url + std::string(path) + ": ";
  RequestState state;
  state.base = impl_->base.get();
  const timeval timeout = ToTimeval(impl_->options.timeout);

  // Host names resolve with a blocking getaddrinfo() here (no evdns base); the caller's thread is
  // the poller's, and the timer below bounds everything after it.
  std::unique_ptr<evhttp_connection, ConnectionDeleter> connection(evhttp_connection_base_new(
      impl_->base.get(), nullptr, impl_->endpoint.host.c_str(), impl_->endpoint.port));
  if (!connection) return Failure(FetchOutcome::kUnreachable, prefix + "cannot create a connection");
  evhttp_connection_set_timeout_tv(connection.get(), &timeout);
  // Capped at what ev_ssize_t holds; libevent refuses a larger body while reading it.
  evhttp_connection_set_max_body_size(connection.get(), static_cast<ev_ssize_t>(std::min<std::size_t>(
                                                            impl_->options.max_response_bytes, 1ull << 40)));

  // Owned by the connection once made; freed by libevent after OnResponse, or with the connection.
  evhttp_request* request = evhttp_request_new(OnResponse, &state);
  if (request == nullptr) return Failure(FetchOutcome::kUnreachable, prefix + "evhttp_request_new failed");
  evhttp_request_set_error_cb(request, OnRequestError);
  evkeyvalq* headers = evhttp_request_get_output_headers(request);
  evhttp_add_header(headers, "Host", impl_->endpoint.Authority().c_str());
  evhttp_add_header(headers, "Accept", "application/json");
  evhttp_add_header(headers, "User-Agent", "sparktrace-rest");
  if (evhttp_make_request(connection.get(), request, EVHTTP_REQ_GET, target.c_str()) != 0) {
    // On failure libevent has already freed the request.
    return Failure(FetchOutcome::kUnreachable, prefix + "cannot start the request");
  }

  // Whatever libevent's own timeouts do, the request ends at its deadline.
  std::unique_ptr<event, EventDeleter> timer(evtimer_new(impl_->base.get(), OnTimeout, &state));
  if (!timer || evtimer_add(timer.get(), &timeout) != 0) {
    return Failure(FetchOutcome::kUnreachable, prefix + "cannot arm the request timer");
  }
  while (!state.finished && !state.timed_out) {
    if (event_base_dispatch(impl_->base.get()) < 0) break;
  }
  timer.reset();
  connection.reset();  // also drops a request still pending after a timeout, without calling back

  if (state.timed_out || (state.error && *state.error == EVREQ_HTTP_TIMEOUT)) {
    return Failure(FetchOutcome::kTimedOut,
                   prefix + "timed out after " + std::to_string(impl_->options.timeout.count()) + " ms");
  }
  if (state.error && *state.error == EVREQ_HTTP_DATA_TOO_LONG) {
    return Failure(FetchOutcome::kTooLarge, prefix + "response body larger than " +
                                                std::to_string(impl_->options.max_response_bytes) + " bytes");
  }
  if (!state.finished || state.status == 0) {
    const char* reason = state.error && *state.error == EVREQ_HTTP_INVALID_HEADER
                             ? "invalid response header"
                             : "could not connect, or the connection closed before the response";
    return Failure(FetchOutcome::kUnreachable, prefix + reason);
  }
  if (state.status != 200) {
    const std::string text = ErrorText(std::move(state.body));
    return Failure(FetchOutcome::kHttpError,
                   prefix + "HTTP " + std::to_string(state.status) + (text.empty() ? "" : ": " + text),
                   state.status);
  }
  FetchResult result;
  result.outcome = FetchOutcome::kOk;
  result.http_status = 200;
  result.body = std::move(state.body);
  return result;
}

}  // namespace sparktrace::listener::rest
