// sparktrace-loadgen: upstream server and load generator for bench/proxy_bench.py.
#include "flags.h"
#include "idle_client.h"
#include "process.h"
#include "server.h"
#include "stream_client.h"
#include "unary_client.h"

#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  sparktrace-loadgen server [--listen 127.0.0.1:0]\n"
    "      prints 'listening PORT'; serves /bench.Load/{Unary,Stream,Idle} until SIGINT/SIGTERM\n"
    "  sparktrace-loadgen client --target HOST:PORT --mode unary|stream|idle [options]\n"
    "      --concurrency N        calls in flight (unary, stream) or streams to open (idle; alias --streams)\n"
    "      --streams-per-channel N  one channel/connection per N calls or streams (default 100)\n"
    "      --duration S           measured seconds (default 2); a cap when --calls is given\n"
    "      --warmup S             unary: seconds of unmeasured calls first (default 0.5, 0 with --calls)\n"
    "      --calls N              unary/stream: stop after N calls\n"
    "      --request-bytes N      unary request size, echoed (default 64)\n"
    "      --message-bytes N      stream: bytes per message (default 65536)\n"
    "      --messages N           stream: messages per call (default 1024)\n"
    "      --call-timeout S       deadline per call (default 30)\n"
    "      --connect-timeout S    per channel (default 10)\n"
    "      --establish-timeout S  idle: wait for initial metadata (default 30)\n"
    "      --hold-max S           idle: hold at most this long (default 600)\n"
    "      --read-bytes-per-s N   stream: read slowly; each call asks for its next message only once its\n"
    "                             average read rate since the call started is at most N (default 0: no cap)\n"
    "      --progress-bytes N     stream: print 'progress BYTES SECONDS' to stderr each time another N bytes\n"
    "                             have been read (all calls, warm-up included; seconds since the first call)\n"
    "      --method /PKG.SERVICE/METHOD  unary/stream: call this method (default /bench.Load/Unary or Stream)\n"
    "      --request-file FILE    unary/stream: send FILE's bytes as the request message; no x-bench-*\n"
    "                             metadata; stream: every call (warm-up too) must return --messages messages\n"
    "      --fresh-uuid TEXT      replace the 36-byte TEXT in the request with a new uuid4 per call\n"
    "      --metadata KEY=VALUE   extra request metadata (repeatable)\n"
    "      prints one JSON line; idle then holds until stdin closes or a signal\n"
    "  sparktrace-loadgen version\n";

int Usage(const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "sparktrace-loadgen: %s\n", error.c_str());
  std::fputs(kUsage, stderr);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sparktrace::loadgen;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("");
  const std::string command = args.front();
  args.erase(args.begin());
  std::string error;
  RaiseFdLimit();

  if (command == "version") {
    std::printf("sparktrace-loadgen grpc=%s\n", grpc::Version().c_str());
    return 0;
  }
  if (command == "server") {
    auto options = ParseServerOptions(args, &error);
    if (!options) return Usage(error);
    return RunServer(*options, BlockTerminationSignals());
  }
  if (command == "client") {
    auto options = ParseClientOptions(args, &error);
    if (!options) return Usage(error);
    switch (options->mode) {
      case Mode::kUnary: return RunUnaryClient(*options);
      case Mode::kStream: return RunStreamClient(*options);
      case Mode::kIdle: return RunIdleClient(*options, BlockTerminationSignals());
    }
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return Usage("unknown command " + command);
}
