#pragma once
// A blocking HTTP/1.1 GET for the driver REST API, on libevent's evhttp client (as
// tracing/otlp/http_exporter.cc). Each Get() runs a private event loop on the caller's thread until
// the answer, an error or the deadline: no hidden thread, no callbacks into the caller.
//
// Why evhttp and not a hand-written socket client: it is already linked, handles chunked and
// Content-Length bodies, and enforces a body-size cap while reading (so an oversized answer never
// sits in memory whole). What it lacks (TLS) the REST feed does not need: the Spark UI is plain http.
//
// Not thread-safe: one thread calls Get() at a time. Every failure is a value, never an exception.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"
#include "listener/rest/spark_ui_endpoint.h"

namespace sparktrace::listener::rest {

struct RestHttpClientOptions {
  // One request, connect to last byte (name resolution, which blocks in getaddrinfo, comes first).
  std::chrono::milliseconds timeout{5000};
  // Larger bodies are refused while reading. Spark keeps at most 1000 jobs/stages; a full stage list
  // with its per-stage peak metrics is a few MiB.
  std::size_t max_response_bytes = 32u << 20;
};

enum class FetchOutcome : std::uint8_t {
  kOk,           // HTTP 200, body complete
  kUnreachable,  // no connection, or it closed before a complete answer
  kTimedOut,
  kHttpError,  // an answer other than 200 (also redirects: the API does not redirect)
  kTooLarge,   // body over max_response_bytes
};

std::string_view FetchOutcomeName(FetchOutcome outcome);

struct FetchResult {
  FetchOutcome outcome = FetchOutcome::kUnreachable;
  int http_status = 0;  // 0 when no answer came
  std::string body;     // kOk only
  // kOk: empty. Else "GET http://host:4040/api/v1/...: HTTP 500: <first 200 bytes of the body>".
  std::string error;
};

class RestHttpClient {
 public:
  static Result<std::unique_ptr<RestHttpClient>> Create(SparkUiEndpoint endpoint,
                                                        RestHttpClientOptions options);

  struct Impl;
  explicit RestHttpClient(std::unique_ptr<Impl> impl);  // use Create()
  ~RestHttpClient();
  RestHttpClient(const RestHttpClient&) = delete;
  RestHttpClient& operator=(const RestHttpClient&) = delete;

  // GETs endpoint.path_prefix + `path` ("/api/v1/applications"). Blocks up to options.timeout.
  FetchResult Get(std::string_view path);

  // "http://host:port" + prefix, for messages.
  const std::string& base_url() const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sparktrace::listener::rest
