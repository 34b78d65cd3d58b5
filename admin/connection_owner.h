#pragma once
// The server's side of an admin connection (admin/http_connection.h): what a connection asks of the
// server that owns it. An interface of its own, so that the server's header needs no libevent and a
// test can drive a connection with a fake owner.

#include <cstdint>
#include <string>

#include "admin/refuse_reason.h"

namespace sparktrace::admin {

class HttpConnection;
struct RequestHead;

// Every method is called on the loop thread from inside the connection's callbacks.
class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  // A request's head arrived; `body_bytes` of body follow, not read yet. The owner answers now
  // (HttpConnection::Respond: the body is then never read, and the connection closes after the
  // answer when one was coming), asks for the body (ReadBody, then OnBody), or answers later
  // (Respond, from the loop thread).
  virtual void OnHead(HttpConnection& connection, const RequestHead& head, std::uint64_t body_bytes) = 0;
  // The body ReadBody asked for arrived whole. Answer with Respond, now or later.
  virtual void OnBody(HttpConnection& connection, std::string body) = 0;
  // The connection refused a request itself (a head limit, a timeout) or closed for a limit.
  virtual void OnRefused(RefuseReason reason) = 0;
  // The socket is closed. The owner destroys the connection later, not during this call.
  virtual void OnClosed(HttpConnection& connection) = 0;
};

}  // namespace sparktrace::admin
