// Command-line options of sparktrace-loadgen and their parser.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sparktrace::loadgen {

enum class Mode { kUnary, kStream, kIdle };

struct ServerOptions {
  std::string listen = "127.0.0.1:0";
};

struct ClientOptions {
  std::string target;
  Mode mode = Mode::kUnary;
  int concurrency = 1;          // unary/stream: parallel calls in flight; idle: streams to open
  int streams_per_channel = 100;  // one channel (= one TCP connection) per this many streams
  double duration_s = 2.0;      // measured time (unary, stream); cap when --calls is given
  double warmup_s = 0.5;        // unary: calls started before this are not measured
  bool warmup_given = false;    // with --calls, warm-up applies only when asked for
  std::int64_t calls = 0;       // unary/stream: stop after this many calls (0 = by duration)
  int request_bytes = 64;       // unary request size, echoed back
  std::int64_t message_bytes = 64 << 10;  // stream: bytes per server message
  std::int64_t messages = 1024;           // stream: messages per call
  double call_timeout_s = 30.0;           // deadline of each unary/stream call
  double connect_timeout_s = 10.0;        // per channel
  double establish_timeout_s = 30.0;      // idle: wait this long for initial metadata
  double hold_max_s = 600.0;              // idle: release streams after this even without EOF
  std::int64_t read_bytes_per_s = 0;      // stream: cap on each call's average read rate (0 = none)
  std::int64_t progress_bytes = 0;        // stream: report to stderr every this many bytes (0 = never)

  // Calls to another service (bench/tracing_bench.py: Spark Connect through sparktrace). With
  // --request-file the request is that file's bytes instead of the generated payload (unary) or
  // the "N S" parameters (stream), no x-bench-* metadata is sent, and stream mode expects
  // exactly --messages responses per call in the warm-up too.
  std::string method;                     // gRPC method path; empty = /bench.Load/Unary or Stream
  std::string request_file;               // raw request message bytes
  std::string request;                    // the file's contents, read by the parser
  std::string fresh_uuid;                 // 36-byte placeholder in `request`, a new uuid4 per call
  std::vector<std::pair<std::string, std::string>> metadata;  // extra request metadata, in order

  bool custom_request() const { return !request_file.empty(); }
};

// Parses the arguments after the subcommand. On error returns nullopt and fills *error.
std::optional<ServerOptions> ParseServerOptions(const std::vector<std::string>& args,
                                                std::string* error);
std::optional<ClientOptions> ParseClientOptions(const std::vector<std::string>& args,
                                                std::string* error);

// Number of channels the client opens for `concurrency` calls or streams.
int ChannelCount(const ClientOptions& options);

}  // namespace sparktrace::loadgen
