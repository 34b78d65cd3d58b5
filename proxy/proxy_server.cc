#include "proxy/proxy_server.h"

#include <algorithm>
#include <climits>

#include <grpc/grpc.h>
#include <grpcpp/security/server_credentials.h>

namespace sparktrace::proxy {
namespace {

// Drains one completion queue until it is shut down and empty. After each wake-up it takes every
// completion that is already there before the calls start their writes, so that what arrived
// together leaves together (see ProxyCall).
void RunWorker(grpc::ServerCompletionQueue* queue) {
  ProxyCall::FlushList flush_list;
  ProxyCall::SetThreadFlushList(&flush_list);
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) {
    static_cast<Completion*>(tag)->Complete(ok);
    while (queue->AsyncNext(&tag, &ok, gpr_time_0(GPR_CLOCK_MONOTONIC)) == grpc::CompletionQueue::GOT_EVENT) {
      static_cast<Completion*>(tag)->Complete(ok);
    }
    flush_list.Flush();
  }
  ProxyCall::SetThreadFlushList(nullptr);
}

}  // namespace

Result<std::unique_ptr<ProxyServer>> ProxyServer::Start(const ProxyConfig& config, UpstreamChannels& upstream,
                                                        std::vector<CallObserver*> observers,
                                                        std::function<void()> on_upstream_connect_failure) {
  auto proxy = std::unique_ptr<ProxyServer>(new ProxyServer());
  proxy->environment_.service = &proxy->service_;
  proxy->environment_.upstream = &upstream;
  proxy->environment_.observers = std::move(observers);

  std::shared_ptr<grpc::ServerCredentials> credentials;
  if (config.tls) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({config.tls->key_pem, config.tls->cert_pem});
    credentials = grpc::SslServerCredentials(ssl);
  } else {
    credentials = grpc::InsecureServerCredentials();
  }

  grpc::ServerBuilder builder;
  int selected_port = 0;
  builder.AddListeningPort(config.listen, credentials, &selected_port);
  builder.RegisterAsyncGenericService(&proxy->service_);
  const int max_bytes = static_cast<int>(std::min<std::uint64_t>(config.max_message_bytes, INT_MAX));
  builder.SetMaxReceiveMessageSize(max_bytes);
  builder.SetMaxSendMessageSize(max_bytes);
  // A second proxy on the same port must fail to start, not silently share the traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (int i = 0; i < config.worker_threads; ++i) proxy->queues_.push_back(builder.AddCompletionQueue());
  proxy->stop_queue_ = builder.AddCompletionQueue(/*is_frequently_polled=*/false);
  proxy->server_ = builder.BuildAndStart();
  if (!proxy->server_ || selected_port == 0) {
    proxy->shut_down_ = true;  // nothing to drain; the queues were never used
    for (auto& queue : proxy->queues_) {
      queue->Shutdown();
      RunWorker(queue.get());
    }
    proxy->stop_queue_->Shutdown();
    return Error{ErrorCode::kIo, "cannot listen on " + config.listen + " (address in use or not local?)"};
  }
  const std::string host = config.listen.substr(0, config.listen.rfind(':'));
  proxy->address_ = host + ":" + std::to_string(selected_port);

  proxy->health_ = std::make_unique<UpstreamHealth>(config.upstream.target, upstream.default_channel(),
                                                    std::move(on_upstream_connect_failure));
  proxy->health_->Start(proxy->queues_.front().get());
  for (auto& queue : proxy->queues_) {
    ProxyCall::Accept(proxy->environment_, queue.get());
    proxy->workers_.emplace_back(RunWorker, queue.get());
  }
  return proxy;
}

ProxyServer::~ProxyServer() { Shutdown(std::chrono::milliseconds(0)); }

void ProxyServer::StopAccepting() {
  if (stopped_accepting_ || shut_down_) return;
  stopped_accepting_ = true;
  environment_.accepting = false;
  // grpc::Server::Shutdown starts with this same core call but then blocks until the calls are
  // done; calling it first, on its own, closes the listener before readiness says so.
  grpc_server_shutdown_and_notify(server_->c_server(), stop_queue_->cq(), this);
}

void ProxyServer::Shutdown(std::chrono::milliseconds drain_timeout) {
  if (shut_down_) return;
  StopAccepting();
  shut_down_ = true;
  if (health_) health_->Stop();
  // Returns once every call is done or cancelled; the workers keep draining the queues meanwhile.
  server_->Shutdown(std::chrono::system_clock::now() + drain_timeout);
  // Cancelled calls still wind down (cancel upstream, collect its status): only then may the
  // queues close, or their next operation would start on a dead queue.
  environment_.WaitUntilNoCalls();
  for (auto& queue : queues_) queue->Shutdown();
  for (auto& worker : workers_) worker.join();
  stop_queue_->Shutdown();
  while (grpc_completion_queue_next(stop_queue_->cq(), gpr_inf_future(GPR_CLOCK_REALTIME), nullptr).type !=
         GRPC_QUEUE_SHUTDOWN) {
  }
}

}  // namespace sparktrace::proxy
