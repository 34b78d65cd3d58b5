#pragma once
// The admin HTTP endpoint on its own libevent loop and thread: GET /healthz, /readyz and /metrics,
// plus whatever POST routes the caller registers (e.g. the driver-event push endpoint) and the trace
// view. The server knows nothing of what a route does: it hands over the request and sends back the
// answer. It is its own small HTTP/1.1 server (admin/http_connection.h), bounded as
// docs/admin-limits.md lists: head sizes, timeouts, connections, bodies, the trace view's queue.
//
// Threads: the readiness probe, the POST routes and the collectables are called on the admin loop
// thread, one request at a time: they must return quickly (hand work to another thread, answer 503
// when it is busy). The trace view's handler runs on a thread of its own (one request at a time), so
// that however long an attempt takes to answer, /healthz, /readyz and /metrics do not wait for it.

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "admin/admin_limits.h"
#include "admin/connection_owner.h"
#include "admin/http_types.h"
#include "common/log_throttle.h"
#include "common/result.h"

struct event;
struct event_base;
struct evconnlistener;
struct sockaddr;

namespace sparktrace::admin {

using PostHandler = std::function<HttpResponse(const HttpRequest& request)>;

// Answers a GET (or HEAD) of a path the server does not serve itself (the trace view's pages, assets
// and /api/v1 JSON), or nullopt for a 404. Called on the server's UI worker thread, never two at once.
using GetHandler = std::function<std::optional<HttpResponse>(const HttpRequest& request)>;

// The trace view on the admin port: its GET handler and who may use it.
struct AdminUi {
  GetHandler handler;  // empty: no trace view (only /healthz, /readyz, /metrics and the POST routes)
  // Whether `handler` answers GET on this path, without running it: another method there gets 405
  // rather than 404 (and a POST to a large attempt's path does not compute its answer). Called on
  // the admin loop thread.
  std::function<bool(const std::string& path)> serves;
  // When not empty, every path the handler serves needs it: `Authorization: Bearer TOKEN`, or the
  // cookie that a page opened once with `?token=TOKEN` sets (HttpOnly, SameSite=Strict). The probes,
  // /metrics and the POST routes stay open. Compared in constant time; never logged.
  std::string token;
};

struct PostRoute {
  std::string path;  // exact, e.g. "/api/v1/events"
  // Larger bodies are refused with 413 before the handler is called (and before they are read).
  std::size_t max_body_bytes = std::size_t{1} << 20;
  PostHandler handler;
  // The media types a body may be declared as (case-insensitive, parameters ignored); another
  // Content-Type gets 415, so that a page of another site cannot send one as text/plain or a form.
  // A request without Content-Type passes (scripts and shippers; a browser's carries an Origin).
  // Empty: any type.
  std::vector<std::string> content_types = {"application/x-ndjson", "application/json", "application/jsonl"};
  // When the admin port has a token (--admin-token), the request must carry it as
  // `Authorization: Bearer TOKEN` (401 otherwise), as the trace view's API must.
  bool needs_admin_token = false;
};

// Tells /readyz why the proxy is not ready, or "" when it is. Called on the admin thread.
using ReadinessProbe = std::function<std::string()>;

class AdminMetrics;
class AdminRoutes;
class HttpConnection;
class LoopMailbox;
class UiWorker;

class AdminServer : private ConnectionOwner {
 public:
  // Binds `address` ("host:port", port 0 picks one) and starts serving on a new thread. /metrics
  // shows `registry` (where the server also registers its own sparktrace_admin_* metrics) and then
  // each of `more` (metrics read from elsewhere at scrape time). `post_routes` answer POST on their
  // path (other methods there: 405); every other path is GET. Whatever the routes and collectables
  // capture must outlive the server.
  static Result<std::unique_ptr<AdminServer>> Start(
      const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
      std::vector<std::shared_ptr<const prometheus::Collectable>> more = {},
      std::vector<PostRoute> post_routes = {}, AdminUi ui = {}, AdminLimits limits = {});
  // Stops the loop and joins its thread, then waits for a trace-view request being computed.
  ~AdminServer() override;
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // "127.0.0.1:9464" with the port actually bound.
  const std::string& address() const { return address_; }

 private:
  AdminServer();

  // ConnectionOwner, on the loop thread.
  void OnHead(HttpConnection& connection, const RequestHead& head, std::uint64_t body_bytes) override;
  void OnBody(HttpConnection& connection, std::string body) override;
  void OnRefused(RefuseReason reason) override;
  void OnClosed(HttpConnection& connection) override;

  // An open connection and what its admission counted it against.
  struct Slot {
    std::unique_ptr<HttpConnection> connection;
    std::string peer;         // the client's address, for max_connections_per_peer
    bool probe_only = false;  // admitted past the caps: /healthz and /readyz, then closed
  };
  // Which slots an eviction may choose from.
  enum class Pool { kRegular, kProbe };
  // Where a new connection goes.
  enum class Admission { kRegular, kProbeOnly, kRefused };

  static void OnAccept(evconnlistener*, int fd, sockaddr* address, int, void* self);
  static void OnAcceptError(evconnlistener*, void* self);
  static void OnResumeAccepting(int, short, void* self);
  static void OnReap(int, short, void* self);
  void Accept(int fd, const sockaddr* address);
  // Decides where a new connection from `peer` goes, making room when a cap is reached: refused only
  // when every connection, the probes' too, is being answered.
  Admission Admit(const std::string& peer);
  // Closes the connection of `pool` (of `peer` alone when given) that loses least by it: the oldest
  // idle one, else the oldest sending a head, else (not for probes) the oldest sending a body.
  bool EvictOne(Pool pool, const std::string* peer);
  // Sends the answer with the headers every admin answer has; `close` ends the connection after it.
  static void Reply(HttpConnection& connection, HttpResponse response, bool close = false);
  void RunUi(HttpConnection& connection, const RequestHead& head);
  void ReleaseBody(std::uint64_t connection_id);

  struct EventBaseDeleter {
    void operator()(event_base* base) const;
  };
  struct EventDeleter {
    void operator()(event* e) const;
  };
  struct ListenerDeleter {
    void operator()(evconnlistener* listener) const;
  };

  // Declared first, destroyed last: everything below lives on this loop.
  std::unique_ptr<event_base, EventBaseDeleter> base_;
  AdminLimits limits_;
  std::unique_ptr<AdminMetrics> metrics_;
  std::unique_ptr<AdminRoutes> routes_;
  std::unique_ptr<LoopMailbox> mailbox_;
  std::unique_ptr<evconnlistener, ListenerDeleter> listener_;
  std::unique_ptr<event, EventDeleter> resume_accepting_;
  std::unique_ptr<event, EventDeleter> reap_;
  // By id, which is also accept order: the first evictable one is the oldest.
  std::map<std::uint64_t, Slot> connections_;
  std::size_t regular_connections_ = 0;  // connections_ less the probe-only ones
  std::size_t probe_connections_ = 0;
  std::map<std::string, std::size_t> connections_per_peer_;  // regular ones; no entry at zero
  std::vector<std::unique_ptr<HttpConnection>> closed_;      // freed by reap_, outside their callbacks
  std::uint64_t next_connection_id_ = 1;
  // Bodies being received, by connection: their declared lengths add up to at most
  // max(limits_.max_pending_body_bytes, the largest route limit).
  std::map<std::uint64_t, std::uint64_t> pending_bodies_;
  std::uint64_t pending_body_bytes_ = 0;
  LogThrottle accept_warnings_{std::chrono::seconds(10)};
  std::string address_;
  std::thread loop_;
  // Last: joined before the rest goes (by the destructor, after the loop), so that no trace-view job
  // runs or posts once the routes, metrics and mailbox it uses are freed.
  std::unique_ptr<UiWorker> ui_worker_;
};

}  // namespace sparktrace::admin
