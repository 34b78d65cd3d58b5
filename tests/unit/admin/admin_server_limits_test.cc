// The admin server's bounds (admin/admin_limits.h, docs/admin-limits.md) over real loopback sockets:
// head limits, timeouts, the connection cap, the trace view off the loop (probes answer while a
// handler blocks on a gate), Host/Origin/Content-Type checks, and HTTP/1.1 framing. Every wait is a
// socket timeout or a gate; none is a sleep.

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "admin/admin_server.h"
#include "tests/unit/admin/raw_http_client.h"

namespace sparktrace::admin {
namespace {

using test_client::HeaderValue;
using test_client::RawConnection;
using test_client::RawResponse;
using test_client::Send;

// Holds the trace view's handler until the test opens it; counts the handlers that arrived.
class Gate {
 public:
  void Arrive() {
    std::unique_lock lock(mu_);
    ++arrived_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  bool WaitForArrivals(int count) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, std::chrono::seconds(5), [&] { return arrived_ >= count; });
  }
  void Open() {
    const std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int arrived_ = 0;
  bool open_ = false;
};

// A metric's value in the registry (counters and gauges), or -1 when it is not there.
double MetricValue(prometheus::Registry& registry, const std::string& name, const std::string& reason = "") {
  for (const auto& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const auto& metric : family.metric) {
      const bool matches =
          reason.empty() || std::any_of(metric.label.begin(), metric.label.end(), [&](const auto& l) {
            return l.name == "reason" && l.value == reason;
          });
      if (!matches) continue;
      return family.type == prometheus::MetricType::Gauge ? metric.gauge.value : metric.counter.value;
    }
  }
  return -1;
}

double Refused(prometheus::Registry& registry, const std::string& reason) {
  return MetricValue(registry, "sparktrace_admin_requests_refused_total", reason);
}

// For counters that change after an answer went out (a close, a timeout): no event says when.
template <typename Predicate>
bool Eventually(Predicate predicate) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

class AdminServerLimits : public ::testing::Test {
 protected:
  void Start(AdminLimits limits = {}) {
    PostRoute route;
    route.path = "/api/v1/events";
    route.max_body_bytes = 64;
    route.handler = [](const HttpRequest& request) {
      return HttpResponse{
          202, "application/json", "{\"bytes\":" + std::to_string(request.body.size()) + "}", {}};
    };
    std::vector<PostRoute> routes;
    routes.push_back(std::move(route));
    AdminUi ui;
    ui.serves = [](const std::string& path) { return path != "/healthz"; };
    ui.handler = [this](const HttpRequest& request) -> std::optional<HttpResponse> {
      if (request.path == "/slow") gate_.Arrive();
      if (request.path == "/big")
        return HttpResponse{200, "application/octet-stream", std::string(16 << 20, 'b'), {}};
      return HttpResponse{200, "text/plain", "view " + request.path, {}};
    };
    auto server = AdminServer::Start(
        "127.0.0.1:0", [] { return std::string(); }, registry_, {}, std::move(routes), std::move(ui),
        std::move(limits));
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    address_ = server_->address();
  }
  void TearDown() override {
    gate_.Open();  // a handler still held would keep the server's destructor waiting
    server_.reset();
  }

  // A request line and headers for HTTP/1.1 with this server's address as Host.
  std::string Get(const std::string& target, const std::string& extra = "") const {
    return "GET " + target + " HTTP/1.1\r\nHost: " + address_ + "\r\n" + extra + "\r\n";
  }

  Gate gate_;
  std::shared_ptr<prometheus::Registry> registry_ = std::make_shared<prometheus::Registry>();
  std::unique_ptr<AdminServer> server_;
  std::string address_;
};

TEST_F(AdminServerLimits, ProbesAnswerWhileTheTraceViewComputes) {
  Start();
  RawConnection slow(address_);
  ASSERT_TRUE(slow.Send(Get("/slow")));
  ASSERT_TRUE(gate_.WaitForArrivals(1));
  // The handler is held: the loop still answers the probes and the metrics.
  for (const char* path : {"/healthz", "/readyz", "/metrics"}) {
    EXPECT_EQ(Send(address_, "GET", path).status, 200) << path;
  }
  EXPECT_EQ(MetricValue(*registry_, "sparktrace_admin_ui_requests"), 1);
  gate_.Open();
  const RawResponse answer = slow.ReadResponse();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, "view /slow");
  EXPECT_EQ(HeaderValue(answer.head, "X-Frame-Options"), "DENY");
  EXPECT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_ui_requests") == 0; }));
}

TEST_F(AdminServerLimits, AFullTraceViewQueueIs503WithRetryAfter) {
  AdminLimits limits;
  limits.max_ui_queue = 1;
  Start(limits);
  RawConnection running(address_);
  ASSERT_TRUE(running.Send(Get("/slow")));
  ASSERT_TRUE(gate_.WaitForArrivals(1));
  RawConnection queued(address_);
  ASSERT_TRUE(queued.Send(Get("/queued")));
  ASSERT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_ui_requests") == 2; }));
  const RawResponse refused = Send(address_, "GET", "/third");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(HeaderValue(refused.head, "Retry-After"), "1");
  EXPECT_EQ(Refused(*registry_, "busy"), 1);
  EXPECT_EQ(Send(address_, "GET", "/healthz").status, 200);
  gate_.Open();
  EXPECT_EQ(running.ReadResponse().status, 200);
  EXPECT_EQ(queued.ReadResponse().body, "view /queued");
}

TEST_F(AdminServerLimits, AClientThatLeavesBeforeItsAnswerBreaksNothing) {
  Start();
  {
    RawConnection gone(address_);
    ASSERT_TRUE(gone.Send(Get("/slow")));
    ASSERT_TRUE(gate_.WaitForArrivals(1));
  }  // closed while its answer is computed
  gate_.Open();
  EXPECT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_ui_requests") == 0; }));
  EXPECT_EQ(Send(address_, "GET", "/after").body, "view /after");
  EXPECT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_connections") == 0; }));
}

TEST_F(AdminServerLimits, ARequestLineWithoutANewlineIs414AtItsLimit) {
  Start();
  RawConnection connection(address_);
  connection.Send(std::string(std::size_t{64} * 1024, 'A'));  // may stop early: the server refuses at 8 KiB
  const RawResponse response = connection.ReadResponse();
  EXPECT_EQ(response.status, 414);
  EXPECT_NE(HeaderValue(response.head, "Connection").find("close"), std::string::npos);
  EXPECT_TRUE(connection.ClosedByPeer());
  EXPECT_EQ(Refused(*registry_, "uri_too_long"), 1);
}

TEST_F(AdminServerLimits, TooManyHeaderBytesOrLinesIs431BeforeTheToken) {
  Start();
  std::string flood = "GET /healthz HTTP/1.1\r\n";
  while (flood.size() < std::size_t{256} * 1024) flood += "X-Flood: " + std::string(100, 'f') + "\r\n";
  RawConnection bytes(address_);
  bytes.Send(flood);
  EXPECT_EQ(bytes.ReadResponse().status, 431);
  EXPECT_TRUE(bytes.ClosedByPeer());

  std::string lines = "GET /healthz HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) lines += "X-" + std::to_string(i) + ": v\r\n";
  RawConnection count(address_);
  count.Send(lines + "\r\n");
  EXPECT_EQ(count.ReadResponse().status, 431);
  EXPECT_EQ(Refused(*registry_, "headers_too_large"), 2);
}

TEST_F(AdminServerLimits, AHeadThatDoesNotArriveInTimeIs408) {
  AdminLimits limits;
  limits.header_timeout = std::chrono::milliseconds(200);
  Start(limits);
  RawConnection slowloris(address_);
  ASSERT_TRUE(slowloris.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));  // never the blank line
  EXPECT_EQ(slowloris.ReadResponse().status, 408);
  EXPECT_TRUE(slowloris.ClosedByPeer());

  RawConnection silent(address_);  // no byte at all: closed without an answer
  EXPECT_TRUE(silent.ClosedByPeer());
  EXPECT_EQ(Refused(*registry_, "header_timeout"), 2);
}

TEST_F(AdminServerLimits, AnIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout) {
  AdminLimits limits;
  limits.idle_timeout = std::chrono::milliseconds(200);
  Start(limits);
  RawConnection connection(address_);
  ASSERT_TRUE(connection.Send(Get("/healthz")));
  EXPECT_EQ(connection.ReadResponse().status, 200);
  EXPECT_TRUE(connection.ClosedByPeer());
  EXPECT_EQ(Refused(*registry_, "idle_timeout"), 1);
}

TEST_F(AdminServerLimits, ABodyThatDoesNotArriveInTimeIs408) {
  AdminLimits limits;
  limits.body_timeout = std::chrono::milliseconds(200);
  Start(limits);
  RawConnection connection(address_);
  ASSERT_TRUE(connection.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
                              "\r\nContent-Length: 10\r\n\r\nhalf"));
  EXPECT_EQ(connection.ReadResponse().status, 408);
  EXPECT_EQ(Refused(*registry_, "body_timeout"), 1);
}

TEST_F(AdminServerLimits, AtTheCapTheOldestIdleConnectionMakesRoom) {
  AdminLimits limits;
  limits.max_connections = 2;
  Start(limits);
  RawConnection idle(address_);
  ASSERT_TRUE(idle.Send(Get("/healthz")));
  ASSERT_EQ(idle.ReadResponse().status, 200);  // now idle, kept alive
  RawConnection sending(address_);
  ASSERT_TRUE(sending.Send("GET /healthz HTTP/1.1\r\n"));  // a head under way
  // A probe still gets in: the idle connection is closed for it, the one sending its head is not.
  EXPECT_EQ(Send(address_, "GET", "/healthz").status, 200);
  EXPECT_TRUE(idle.ClosedByPeer());
  ASSERT_TRUE(sending.Send("Host: x\r\n\r\n"));
  EXPECT_EQ(sending.ReadResponse().status, 200);
  EXPECT_GE(Refused(*registry_, "evicted"), 1);
  EXPECT_EQ(Refused(*registry_, "max_connections"), 0);
}

TEST_F(AdminServerLimits, ABodyThatStopsArrivingIs408AfterTheBodyIdleTimeout) {
  AdminLimits limits;
  limits.body_idle_timeout = std::chrono::milliseconds(200);  // the whole body may take a minute
  Start(limits);
  RawConnection connection(address_);
  ASSERT_TRUE(connection.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
                              "\r\nContent-Length: 10\r\n\r\nhalf"));
  const RawResponse response = connection.ReadResponse();
  EXPECT_EQ(response.status, 408);
  EXPECT_NE(response.body.find("body idle timeout"), std::string::npos) << response.body;
  EXPECT_EQ(Refused(*registry_, "body_timeout"), 1);
}

TEST_F(AdminServerLimits, ConnectionsWaitingForABodyMakeRoomAtTheCap) {
  AdminLimits limits;
  limits.max_connections = 2;
  limits.probe_connections = 0;  // the room must come from the connections that wait for bodies
  Start(limits);
  const std::string head =
      "POST /api/v1/events HTTP/1.1\r\nHost: " + address_ + "\r\nContent-Length: 10\r\n\r\n";
  RawConnection older(address_);
  ASSERT_TRUE(older.Send(head));
  RawConnection newer(address_);
  ASSERT_TRUE(newer.Send(head));
  ASSERT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_connections") == 2; }));
  EXPECT_EQ(Send(address_, "GET", "/healthz").status, 200);
  EXPECT_TRUE(older.ClosedByPeer());  // the oldest goes first
  ASSERT_TRUE(newer.Send("0123456789"));
  EXPECT_EQ(newer.ReadResponse().status, 202);
  EXPECT_GE(Refused(*registry_, "evicted"), 1);
  EXPECT_EQ(Refused(*registry_, "max_connections"), 0);
}

TEST_F(AdminServerLimits, PastTheCapTheProbesStillAnswerAndNothingElse) {
  AdminLimits limits;
  limits.max_connections = 1;
  limits.probe_connections = 2;
  Start(limits);
  RawConnection busy(address_);
  ASSERT_TRUE(busy.Send(Get("/slow")));  // the one slot is being answered: nothing to evict
  ASSERT_TRUE(gate_.WaitForArrivals(1));
  for (int i = 0; i < 5; ++i) {  // more probes than probe connections: each closes after its answer
    RawConnection probe(address_);
    ASSERT_TRUE(probe.Send(Get(i % 2 == 0 ? "/healthz" : "/readyz")));
    const RawResponse response = probe.ReadResponse();
    EXPECT_EQ(response.status, 200) << i;
    EXPECT_EQ(HeaderValue(response.head, "Connection"), "close") << i;
  }
  const RawResponse metrics = Send(address_, "GET", "/metrics");
  EXPECT_EQ(metrics.status, 503);
  EXPECT_EQ(Refused(*registry_, "probe_only"), 1);
  EXPECT_EQ(Refused(*registry_, "max_connections"), 0);
  gate_.Open();
  EXPECT_EQ(busy.ReadResponse().status, 200);
}

TEST_F(AdminServerLimits, OnePeerAtItsShareMakesRoomAmongItsOwnConnections) {
  AdminLimits limits;
  limits.max_connections_per_peer = 2;
  limits.probe_connections = 0;
  Start(limits);
  RawConnection first(address_);
  ASSERT_TRUE(first.Send(Get("/healthz")));
  ASSERT_EQ(first.ReadResponse().status, 200);  // idle, kept alive
  RawConnection second(address_);
  ASSERT_TRUE(second.Send(Get("/healthz")));
  ASSERT_EQ(second.ReadResponse().status, 200);
  // Far below the cap of 256, but this address has its two: its own oldest idle one goes.
  EXPECT_EQ(Send(address_, "GET", "/healthz").status, 200);
  EXPECT_TRUE(first.ClosedByPeer());
  ASSERT_TRUE(second.Send(Get("/readyz")));
  EXPECT_EQ(second.ReadResponse().status, 200);
  EXPECT_EQ(Refused(*registry_, "evicted"), 1);
}

TEST_F(AdminServerLimits, AtTheCapWithEverySlotServingANewConnectionGets503) {
  AdminLimits limits;
  limits.max_connections = 1;
  limits.probe_connections = 0;
  Start(limits);
  RawConnection busy(address_);
  ASSERT_TRUE(busy.Send(Get("/slow")));
  ASSERT_TRUE(gate_.WaitForArrivals(1));
  RawConnection refused(address_);
  const RawResponse response = refused.ReadResponse();
  EXPECT_EQ(response.status, 503);
  EXPECT_EQ(HeaderValue(response.head, "Retry-After"), "1");
  EXPECT_EQ(Refused(*registry_, "max_connections"), 1);
  gate_.Open();
  EXPECT_EQ(busy.ReadResponse().status, 200);
}

TEST_F(AdminServerLimits, TheTraceViewAndPostRoutesAnswerOnlyKnownHosts) {
  Start();
  const auto with_host = [&](const std::string& method, const std::string& target, const std::string& host) {
    RawConnection connection(address_);
    connection.Send(method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\nContent-Length: 0\r\n\r\n");
    return connection.ReadResponse().status;
  };
  EXPECT_EQ(with_host("GET", "/api/v1/tasks", "rebound.example:9464"), 421);
  EXPECT_EQ(with_host("POST", "/api/v1/events", "rebound.example"), 421);
  EXPECT_EQ(Refused(*registry_, "host"), 2);
  // Probes and /metrics answer whatever Host the kubelet or Prometheus name.
  EXPECT_EQ(with_host("GET", "/healthz", "rebound.example"), 200);
  EXPECT_EQ(with_host("GET", "/metrics", "10.0.0.7:9464"), 200);
  EXPECT_EQ(with_host("GET", "/api/v1/tasks", "localhost:9464"), 200);
  EXPECT_EQ(with_host("GET", "/api/v1/tasks", "[::1]:1"), 200);
  EXPECT_EQ(with_host("POST", "/api/v1/events", "127.0.0.1"), 202);
}

TEST_F(AdminServerLimits, ListedHostsAreAllowed) {
  AdminLimits limits;
  limits.allowed_hosts = {"sparktrace.tools.svc"};
  Start(limits);
  RawConnection connection(address_);
  connection.Send("GET /api/v1/tasks HTTP/1.1\r\nHost: sparktrace.tools.svc:9464\r\n\r\n");
  EXPECT_EQ(connection.ReadResponse().status, 200);
}

TEST_F(AdminServerLimits, CrossOriginAndBrowserTypedWritesAreRefused) {
  Start();
  const auto post = [&](const std::string& headers) {
    return Send(address_, "POST", "/api/v1/events", "{\"Event\":\"x\"}\n", headers).status;
  };
  EXPECT_EQ(post("Origin: http://evil.example\r\n"), 403);
  EXPECT_EQ(post("Origin: null\r\n"), 403);
  EXPECT_EQ(Refused(*registry_, "origin"), 2);
  EXPECT_EQ(post("Origin: http://" + address_ + "\r\nContent-Type: application/x-ndjson\r\n"), 202);
  EXPECT_EQ(post("Content-Type: text/plain\r\n"), 415);
  EXPECT_EQ(post("Content-Type: application/x-www-form-urlencoded\r\n"), 415);
  EXPECT_EQ(post("Content-Type: multipart/form-data; boundary=x\r\n"), 415);
  EXPECT_EQ(Refused(*registry_, "content_type"), 3);
  EXPECT_EQ(post("Content-Type: Application/X-NDJSON; charset=utf-8\r\n"), 202);
  EXPECT_EQ(post("Content-Type: application/json\r\n"), 202);
  EXPECT_EQ(post(""), 202);  // scripts and shippers that name no type
}

TEST_F(AdminServerLimits, BodiesNeedContentLengthAndGet100ContinueWhenAsked) {
  Start();
  RawConnection chunked(address_);
  chunked.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
               "\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(chunked.ReadResponse().status, 411);
  EXPECT_EQ(Refused(*registry_, "length_required"), 1);

  RawConnection expecting(address_);
  ASSERT_TRUE(expecting.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
                             "\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(expecting.ReadResponse().status, 100);
  ASSERT_TRUE(expecting.Send("hello"));
  const RawResponse accepted = expecting.ReadResponse();
  EXPECT_EQ(accepted.status, 202);
  EXPECT_EQ(accepted.body, "{\"bytes\":5}");

  // Over the route's limit: 413 at once, without a 100 and without reading the body.
  RawConnection large(address_);
  ASSERT_TRUE(large.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
                         "\r\nContent-Length: 65\r\nExpect: 100-continue\r\n\r\n"));
  EXPECT_EQ(large.ReadResponse().status, 413);
  EXPECT_EQ(Refused(*registry_, "body_too_large"), 1);
}

TEST_F(AdminServerLimits, BodiesBeingReceivedShareOneBudget) {
  AdminLimits limits;
  limits.max_body_buffer_bytes = 0;  // raised to the largest route's limit: 64 bytes
  Start(limits);
  RawConnection first(address_);
  ASSERT_TRUE(first.Send("POST /api/v1/events HTTP/1.1\r\nHost: " + address_ +
                         "\r\nContent-Length: 60\r\nExpect: 100-continue\r\n\r\n"));
  ASSERT_EQ(first.ReadResponse().status, 100);  // its 60 bytes are reserved
  const RawResponse second = Send(address_, "POST", "/api/v1/events", std::string(10, 'x'));
  EXPECT_EQ(second.status, 503);
  EXPECT_EQ(HeaderValue(second.head, "Retry-After"), "1");
  ASSERT_TRUE(first.Send(std::string(60, 'y')));
  EXPECT_EQ(first.ReadResponse().status, 202);
  EXPECT_EQ(Send(address_, "POST", "/api/v1/events", std::string(10, 'x')).status, 202);  // released
}

TEST_F(AdminServerLimits, KeepsAliveAnswersPipelinedRequestsInOrderAndHead) {
  Start();
  RawConnection connection(address_);
  ASSERT_TRUE(connection.Send(Get("/healthz") + "HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n" + Get("/one")));
  const RawResponse first = connection.ReadResponse();
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(first.body, "ok\n");
  const RawResponse head = connection.ReadResponse(/*head_request=*/true);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(HeaderValue(head.head, "Content-Length"), "3");
  const RawResponse third = connection.ReadResponse();
  EXPECT_EQ(third.body, "view /one");
  ASSERT_TRUE(connection.Send(Get("/two", "Connection: close\r\n")));
  const RawResponse last = connection.ReadResponse();
  EXPECT_EQ(last.body, "view /two");
  EXPECT_EQ(HeaderValue(last.head, "Connection"), "close");
  EXPECT_TRUE(connection.ClosedByPeer());

  RawConnection http10(address_);
  ASSERT_TRUE(http10.Send("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  const RawResponse kept = http10.ReadResponse();
  EXPECT_EQ(HeaderValue(kept.head, "Connection"), "keep-alive");
  ASSERT_TRUE(http10.Send("GET /healthz HTTP/1.0\r\n\r\n"));
  EXPECT_EQ(http10.ReadResponse().status, 200);
  EXPECT_TRUE(http10.ClosedByPeer());
}

TEST_F(AdminServerLimits, MalformedHeadsAre400And505) {
  Start();
  RawConnection spaced(address_);
  spaced.Send("GET /healthz HTTP/1.1\r\nHost : x\r\n\r\n");
  EXPECT_EQ(spaced.ReadResponse().status, 400);
  RawConnection http2(address_);
  http2.Send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
  EXPECT_EQ(http2.ReadResponse().status, 505);
  EXPECT_EQ(Refused(*registry_, "bad_request"), 2);
}

TEST_F(AdminServerLimits, AnAnswerTheClientDoesNotReadIsDroppedAfterTheWriteTimeout) {
  AdminLimits limits;
  limits.write_timeout = std::chrono::milliseconds(200);
  Start(limits);
  RawConnection reader(address_);
  const int small = 4096;
  setsockopt(reader.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  ASSERT_TRUE(reader.Send(Get("/big")));  // 16 MiB that is never read
  EXPECT_TRUE(Eventually([&] { return Refused(*registry_, "write_timeout") == 1; }));
  EXPECT_TRUE(Eventually([&] { return MetricValue(*registry_, "sparktrace_admin_connections") == 0; }));
}

}  // namespace
}  // namespace sparktrace::admin
