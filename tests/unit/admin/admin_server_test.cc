// The admin server's routing (admin/admin_server.h): GET paths, registered POST routes, 405 for
// other methods, 413 over a route's body limit; over real loopback HTTP.

#include "admin/admin_server.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <atomic>
#include <memory>
#include <string>

#include "tests/unit/admin/raw_http_client.h"

namespace sparktrace::admin {
namespace {

using test_client::HeaderValue;
using test_client::RawResponse;
using test_client::Send;

class AdminServerRoutes : public ::testing::Test {
 protected:
  void SetUp() override {
    PostRoute route;
    route.path = "/api/v1/things";
    route.max_body_bytes = 64;
    route.handler = [this](const HttpRequest& request) {
      ++calls_;
      last_body_ = request.body;
      last_query_ = request.query;
      last_header_ = request.header("X-Thing").value_or("(none)");
      HttpResponse response{202, "application/json", "{\"ok\":true}", {}};
      response.headers.emplace_back("Retry-After", "7");
      return response;
    };
    std::vector<PostRoute> routes;
    routes.push_back(std::move(route));
    auto server = AdminServer::Start(
        "127.0.0.1:0", [] { return std::string(); }, std::make_shared<prometheus::Registry>(), {},
        std::move(routes));
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
  }

  std::atomic<int> calls_{0};
  std::string last_body_;
  std::string last_query_;
  std::string last_header_;
  std::unique_ptr<AdminServer> server_;
};

TEST_F(AdminServerRoutes, PostReachesTheRouteWithBodyQueryAndHeaders) {
  const RawResponse response =
      Send(server_->address(), "POST", "/api/v1/things?app=a%2Fb", "line 1\nline 2\n", "x-thing: yes\r\n");
  EXPECT_EQ(response.status, 202) << response.head;
  EXPECT_EQ(response.body, "{\"ok\":true}");
  EXPECT_NE(response.head.find("Retry-After: 7"), std::string::npos) << response.head;
  EXPECT_NE(response.head.find("Content-Type: application/json"), std::string::npos) << response.head;
  EXPECT_EQ(calls_, 1);
  EXPECT_EQ(last_body_, "line 1\nline 2\n");
  EXPECT_EQ(last_query_, "app=a%2Fb");
  EXPECT_EQ(last_header_, "yes");
}

TEST_F(AdminServerRoutes, OtherMethodsOnAPostRouteAre405) {
  for (const char* method : {"GET", "PUT", "DELETE"}) {
    const RawResponse response = Send(server_->address(), method, "/api/v1/things");
    EXPECT_EQ(response.status, 405) << method;
    EXPECT_NE(response.head.find("Allow: POST"), std::string::npos) << response.head;
  }
  EXPECT_EQ(calls_, 0);
}

TEST_F(AdminServerRoutes, PostElsewhereIs405AndGetPathsStillWork) {
  EXPECT_EQ(Send(server_->address(), "POST", "/metrics", "x").status, 405);
  EXPECT_EQ(Send(server_->address(), "GET", "/healthz").status, 200);
  EXPECT_EQ(Send(server_->address(), "GET", "/metrics").status, 200);
  const RawResponse missing = Send(server_->address(), "GET", "/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_NE(missing.body.find("POST /api/v1/things"), std::string::npos) << missing.body;
}

TEST_F(AdminServerRoutes, ABodyOverTheRouteLimitIs413AndNeverReachesIt) {
  const RawResponse response = Send(server_->address(), "POST", "/api/v1/things", std::string(65, 'x'));
  EXPECT_EQ(response.status, 413) << response.head;
  EXPECT_EQ(calls_, 0);
  EXPECT_EQ(Send(server_->address(), "POST", "/api/v1/things", std::string(64, 'x')).status, 202);
  EXPECT_EQ(calls_, 1);
}

// The trace view on the admin port: token checks, ETags and gzip (admin/ui_access.h, admin/http_caching.h).
class AdminServerUi : public ::testing::Test {
 protected:
  void StartWith(std::string token) {
    AdminUi ui;
    ui.token = std::move(token);
    ui.serves = [](const std::string& path) { return path != "/missing"; };
    ui.handler = [](const HttpRequest& request) -> std::optional<HttpResponse> {
      if (request.path == "/missing") return std::nullopt;
      // A handler that knows its revision: its own tag, and a 304 it answers itself.
      if (request.path == "/tagged") {
        if (request.header("If-None-Match") == std::optional<std::string>("\"r1\"")) {
          return HttpResponse{304, "application/json; charset=utf-8", "", {{"ETag", "\"r1\""}}};
        }
        return HttpResponse{200, "application/json; charset=utf-8", "{\"pad\":\"" + std::string(4000, 'y') + "\"}",
                            {{"ETag", "\"r1\""}}};
      }
      // Large and repetitive, so that gzip has something to do.
      return HttpResponse{200,
                          "application/json; charset=utf-8",
                          "{\"path\":\"" + request.path + "\",\"pad\":\"" + std::string(4000, 'x') + "\"}",
                          {}};
    };
    auto server = AdminServer::Start(
        "127.0.0.1:0", [] { return std::string(); }, std::make_shared<prometheus::Registry>(), {}, {},
        std::move(ui));
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(server).value();
  }
  std::unique_ptr<AdminServer> server_;
};

TEST_F(AdminServerUi, WithoutATokenEverythingIsOpenAndSecured) {
  StartWith("");
  const auto page = Send(server_->address(), "GET", "/tasks/a/b/c/1");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(HeaderValue(page.head, "Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  EXPECT_EQ(HeaderValue(page.head, "X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(Send(server_->address(), "GET", "/missing").status, 404);
  EXPECT_EQ(Send(server_->address(), "POST", "/api/v1/tasks").status, 405);
  EXPECT_EQ(Send(server_->address(), "POST", "/missing").status, 404);  // not the view's: no 405
}

TEST_F(AdminServerUi, RequiresTheTokenAsBearerOrCookieButLeavesProbesOpen) {
  StartWith("s3cret-token");
  EXPECT_EQ(Send(server_->address(), "GET", "/api/v1/tasks").status, 401);
  EXPECT_EQ(Send(server_->address(), "GET", "/api/v1/tasks", "", "Authorization: Bearer wrong\r\n").status,
            401);
  EXPECT_EQ(
      Send(server_->address(), "GET", "/api/v1/tasks", "", "Authorization: Bearer s3cret-token\r\n").status,
      200);
  EXPECT_EQ(Send(server_->address(), "GET", "/", "", "Cookie: a=b; sparktrace_token=s3cret-token\r\n").status,
            200);
  EXPECT_EQ(Send(server_->address(), "GET", "/healthz").status, 200);
  EXPECT_EQ(Send(server_->address(), "GET", "/readyz").status, 200);
  EXPECT_EQ(Send(server_->address(), "GET", "/metrics").status, 200);
  const auto unauthorized = Send(server_->address(), "GET", "/tasks/x");
  EXPECT_EQ(unauthorized.body.find("s3cret"), std::string::npos);
}

TEST_F(AdminServerUi, ATokenLoginSetsAnHttpOnlyCookieAndDropsTheToken) {
  StartWith("s3cret-token");
  const auto login = Send(server_->address(), "GET", "/tasks/etl/load/r/1?map_index=2&token=s3cret-token");
  EXPECT_EQ(login.status, 303);
  EXPECT_EQ(HeaderValue(login.head, "Location"), "/tasks/etl/load/r/1?map_index=2");
  const std::string cookie = HeaderValue(login.head, "Set-Cookie");
  EXPECT_NE(cookie.find("sparktrace_token=s3cret-token"), std::string::npos);
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  EXPECT_EQ(Send(server_->address(), "GET", "/?token=nope").status, 401);
}

TEST_F(AdminServerUi, AnswersAMatchingETagWith304AndCompressesWhenAsked) {
  StartWith("");
  const auto first = Send(server_->address(), "GET", "/api/v1/tasks");
  const std::string etag = HeaderValue(first.head, "ETag");
  ASSERT_FALSE(etag.empty());
  const auto again = Send(server_->address(), "GET", "/api/v1/tasks", "", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  const auto gzipped = Send(server_->address(), "GET", "/api/v1/tasks", "", "Accept-Encoding: br, gzip\r\n");
  EXPECT_EQ(HeaderValue(gzipped.head, "Content-Encoding"), "gzip");
  EXPECT_LT(gzipped.body.size(), first.body.size() / 4);
  ASSERT_GE(gzipped.body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gzipped.body[0]), 0x1f);  // the gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gzipped.body[1]), 0x8b);
  const auto refused = Send(server_->address(), "GET", "/api/v1/tasks", "", "Accept-Encoding: gzip;q=0\r\n");
  EXPECT_EQ(HeaderValue(refused.head, "Content-Encoding"), "");
}

TEST_F(AdminServerUi, KeepsAHandlersOwnETagAndItsNotModified) {
  StartWith("");
  const auto first = Send(server_->address(), "GET", "/tagged", "", "Accept-Encoding: gzip\r\n");
  EXPECT_EQ(first.status, 200);
  EXPECT_EQ(HeaderValue(first.head, "ETag"), "\"r1\"");  // not a hash of the bytes
  EXPECT_EQ(HeaderValue(first.head, "Content-Encoding"), "gzip");
  const auto again = Send(server_->address(), "GET", "/tagged", "", "If-None-Match: \"r1\"\r\n");
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(HeaderValue(again.head, "ETag"), "\"r1\"");
  EXPECT_EQ(HeaderValue(again.head, "Cache-Control"), "no-cache");
}

}  // namespace
}  // namespace sparktrace::admin
