#pragma once
// The admin HTTP endpoint on its own libevent loop and thread: /healthz, /readyz and /metrics.

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include "common/result.h"

struct event_base;
struct evhttp;

namespace sparktrace::admin {

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Tells /readyz why the proxy is not ready, or "" when it is. Called on the admin thread.
using ReadinessProbe = std::function<std::string()>;

class AdminServer {
 public:
  // Binds `address` ("host:port", port 0 picks one) and starts serving on a new thread. /metrics
  // shows `registry` and then each of `more` (metrics read from elsewhere at scrape time).
  static Result<std::unique_ptr<AdminServer>> Start(
      const std::string& address, ReadinessProbe readiness, std::shared_ptr<prometheus::Registry> registry,
      std::vector<std::shared_ptr<const prometheus::Collectable>> more = {});
  ~AdminServer();  // stops the loop and joins the thread
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // "127.0.0.1:9464" with the port actually bound.
  const std::string& address() const { return address_; }

 private:
  AdminServer() = default;
  HttpResponse Handle(const std::string& path) const;

  struct EventBaseDeleter {
    void operator()(event_base* base) const;
  };
  struct EvhttpDeleter {
    void operator()(evhttp* http) const;
  };

  std::unique_ptr<event_base, EventBaseDeleter> base_;
  std::unique_ptr<evhttp, EvhttpDeleter> http_;
  ReadinessProbe readiness_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::vector<std::shared_ptr<const prometheus::Collectable>> more_collectables_;
  std::string address_;
  std::thread loop_;
};

}  // namespace sparktrace::admin
