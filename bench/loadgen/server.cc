#include "server.h"

#include "process.h"
#include "server_handlers.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include <chrono>
#include <cstdio>

namespace sparktrace::loadgen {

int RunServer(const ServerOptions& options, int signal_fd) {
  LoadService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&service);
  builder.SetMaxReceiveMessageSize(-1);
  builder.SetMaxSendMessageSize(-1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "sparktrace-loadgen: cannot listen on %s\n", options.listen.c_str());
    return 2;
  }
  std::printf("listening %d\n", port);
  std::fflush(stdout);

  // A day at most: every process the benchmark starts stops by itself eventually.
  WakeReason why = WaitForSignalOrEof(signal_fd, /*watch_stdin=*/false, 86400);
  std::fprintf(stderr, "sparktrace-loadgen: server stopping (%s)\n", WakeReasonName(why));
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server->Wait();
  return 0;
}

}  // namespace sparktrace::loadgen
