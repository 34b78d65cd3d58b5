#include "proxy/proxy_server.h"

#include <algorithm>
#include <mutex>

#include <event2/thread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "proxy/descriptor_limit.h"
#include "proxy/listen_sockets.h"
#include "proxy/relay_worker.h"
#include "proxy/tls_contexts.h"

namespace sparktrace::proxy {

Result<std::unique_ptr<ProxyServer>> ProxyServer::Start(const ProxyConfig& config, std::vector<CallObserver*> observers,
                                                        std::function<void()> on_upstream_connect_failure) {
  // Once per process, before any event base exists: the drain wakes workers from another thread.
  static std::once_flag threads_enabled;
  std::call_once(threads_enabled, [] { evthread_use_pthreads(); });

  auto proxy = std::unique_ptr<ProxyServer>(new ProxyServer());
  const RelayBounds& bounds = config.bounds;
  proxy->budget_ = std::make_unique<RelayBudget>(bounds.buffer_budget);
  proxy->metrics_ = std::make_shared<RelayMetrics>(proxy->stats_, *proxy->budget_);
  proxy->environment_.upstream_authority = config.upstream.target;
  proxy->environment_.upstream_tls = config.upstream.tls;
  proxy->environment_.max_message_bytes =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(config.max_message_bytes, UINT32_MAX));
  proxy->environment_.max_header_list_bytes = bounds.max_header_list_bytes;
  proxy->environment_.windows = WindowSizes{bounds.initial_stream_window, bounds.stream_window};
  proxy->environment_.max_traced_message_bytes = bounds.max_traced_message_bytes;
  proxy->environment_.budget = proxy->budget_.get();
  proxy->environment_.stats = &proxy->stats_;
  proxy->environment_.observers = std::move(observers);

  // Every worker may hold up to UpstreamPool::kMaxConnections upstream connections, plus its
  // listener; the rest of the process (admin port, store, event logs, DNS) gets a fixed share.
  const DescriptorLimit descriptors = RaiseDescriptorLimit();
  const std::uint64_t reserved =
      static_cast<std::uint64_t>(config.worker_threads) * (UpstreamPool::kMaxConnections + 2) + 256;
  proxy->max_connections_ = ConnectionsThatFit(descriptors.now, reserved, bounds.max_connections);
  if (proxy->max_connections_ < bounds.max_connections) {
    spdlog::warn("--max-connections {} lowered to {}: the descriptor limit is {} (raised from {})",
                 bounds.max_connections, proxy->max_connections_, descriptors.now, descriptors.before);
  }
  Http2Settings client_settings;
  client_settings.max_concurrent_streams = bounds.max_streams_per_connection;
  client_settings.initial_stream_window = bounds.initial_stream_window;
  client_settings.max_header_list_bytes = bounds.max_header_list_bytes;
  Http2Settings upstream_settings = client_settings;
  upstream_settings.max_concurrent_streams = 0;  // the upstream opens none (no server push)
  proxy->upstream_status_.on_connect_failure = std::move(on_upstream_connect_failure);

  UpstreamTarget upstream;
  if (!SplitHostPort(config.upstream.target, &upstream.host, &upstream.port)) {
    return Error{ErrorCode::kInvalidArgument, "--upstream: bad address " + config.upstream.target};
  }
  if (config.tls) {
    auto context = NewServerTlsContext(config.tls->cert_pem, config.tls->key_pem);
    if (!context.ok()) return context.error();
    proxy->listener_tls_ = std::move(*context);
  }
  if (config.upstream.tls) {
    auto context = NewClientTlsContext(config.upstream.ca_pem);
    if (!context.ok()) return context.error();
    proxy->upstream_tls_ = std::move(*context);
    upstream.tls = proxy->upstream_tls_.get();
  }

  auto sockets = OpenListenSockets(config.listen, config.worker_threads);
  if (!sockets.ok()) return sockets.error();
  proxy->address_ = sockets->address;
  for (std::size_t i = 0; i < sockets->fds.size(); ++i) {
    WorkerSetup setup;
    setup.environment = &proxy->environment_;
    setup.upstream = upstream;
    setup.listener_tls = proxy->listener_tls_.get();
    setup.listen_fd = sockets->fds[i];
    setup.upstream_status = &proxy->upstream_status_;
    setup.live_calls = &proxy->live_calls_;
    setup.stats = &proxy->stats_;
    setup.limits = ClientLimits{proxy->max_connections_, bounds.max_streams_per_connection, bounds.handshake_timeout,
                                bounds.idle_timeout, bounds.connection_buffer_budget};
    setup.client_settings = client_settings;
    setup.upstream_settings = upstream_settings;
    auto worker = RelayWorker::Create(setup);
    if (!worker.ok()) {
      for (std::size_t j = i + 1; j < sockets->fds.size(); ++j) close(sockets->fds[j]);
      return worker.error();
    }
    proxy->workers_.push_back(std::move(*worker));
  }
  for (auto& worker : proxy->workers_) worker->Start();
  return proxy;
}

ProxyServer::~ProxyServer() { Shutdown(std::chrono::milliseconds(0)); }

void ProxyServer::StopAccepting() {
  if (stopped_accepting_ || shut_down_) return;
  stopped_accepting_ = true;
  for (auto& worker : workers_) worker->StopAccepting();
}

void ProxyServer::Shutdown(std::chrono::milliseconds drain_timeout) {
  if (shut_down_) return;
  StopAccepting();
  shut_down_ = true;
  live_calls_.WaitForNone(std::chrono::steady_clock::now() + drain_timeout);
  for (auto& worker : workers_) worker->CancelAll();
  for (auto& worker : workers_) worker->Stop();
}

}  // namespace sparktrace::proxy
