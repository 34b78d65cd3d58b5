#pragma once
// One client connection of the admin port, as a state machine over a libevent bufferevent: it reads a
// request head within the head limits and the header timeout, asks its owner what to do with it,
// reads the body only when asked (after the owner checked its length), writes the answer and then
// waits for the next request (keep-alive, idle timeout) or closes. One request at a time: while a
// request is being answered the connection reads nothing, so a pipelining or flooding client fills
// its own socket buffers, not ours. Memory per connection is bounded by the head limits, the
// socket read high-water mark, and the body limit the owner chose.
//
// Threads: the owner's loop thread only. Lifetime: owned by its owner; once closed (Close(), or
// EOF, an error or a timeout) it calls owner.OnClosed() and must be destroyed later, outside its own
// callbacks, which OnClosed must not do.

#include <chrono>
#include <cstdint>
#include <string>

#include "admin/admin_limits.h"
#include "admin/connection_owner.h"
#include "admin/http_parser.h"
#include "admin/http_types.h"
#include "common/libevent_handles.h"

namespace sparktrace::admin {

class HttpConnection {
 public:
  // Takes `fd` (accepted, non-blocking; closed with the connection). `limits` and `owner` must
  // outlive it.
  HttpConnection(event_base* base, evutil_socket_t fd, std::uint64_t id, const AdminLimits& limits,
                 ConnectionOwner& owner);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Starts reading the first request; false (the socket closed, OnClosed not called) when libevent
  // could not allocate the connection's objects.
  bool Start();

  std::uint64_t id() const { return id_; }
  // The request being answered (valid from OnHead until its answer is written).
  const RequestHead& head() const { return head_; }

  // From OnHead: read the body (answering Expect: 100-continue first), then OnBody.
  void ReadBody();
  // Answers the request being served (from OnHead, OnBody or later on the loop). `close` ends the
  // connection after it, as does a request that asked for that or a body left unread. Ignored when
  // the connection no longer waits for an answer (it closed meanwhile).
  void Respond(const HttpResponse& response, bool close = false);
  // Closes the socket now (an answer being written is dropped). Idempotent.
  void Close();

  // What closing it now would cost, for the owner that must make room at a cap: the least first.
  enum class Loss {
    kNothing,  // idle between requests, or lingering after its last answer
    kHead,     // a request head still arriving (or none begun)
    kBody,     // a request body still arriving: the client sends it again
    kAnswer,   // a request being answered: never closed for room
  };
  Loss loss_if_closed() const;

 private:
  enum class State {
    kReadingHead,  // the first request's head, or the next one's once a byte of it arrived
    kIdle,         // keep-alive: between requests
    kReadingBody,
    kProcessing,  // the owner has the request
    kWriting,     // the answer is being sent
    kLingering,   // after the last answer: our side is shut; reading (and dropping) until the peer's EOF
    kClosed,
  };

  static void OnRead(bufferevent*, void* self);
  static void OnWrite(bufferevent*, void* self);
  static void OnEvent(bufferevent*, short events, void* self);
  static void OnTimer(evutil_socket_t, short, void* self);

  void Readable();
  void ParseHead();
  void HeadComplete();
  void ConsumeBody();
  void Written();
  void TimedOut();
  // Answers a request the connection refuses itself, counts it, and closes after the answer.
  void Refuse(RefuseReason reason, int status, std::string body);
  void StartLingering();
  void Arm(std::chrono::milliseconds timeout);
  // The body timer: body_idle_timeout from now, or what is left of body_timeout if that is sooner.
  void ArmBody();
  void Disarm();

  const std::uint64_t id_;
  const AdminLimits& limits_;
  ConnectionOwner& owner_;
  State state_ = State::kReadingHead;
  RequestHeadParser parser_;
  RequestHead head_;
  std::uint64_t body_bytes_ = 0;
  bool body_read_ = false;
  // When the whole body must have arrived (body_timeout after its head); the timer runs to the
  // earlier of this and body_idle_timeout after the last byte.
  std::chrono::steady_clock::time_point body_deadline_{};
  bool keep_alive_ = false;
  bool close_after_ = false;
  std::size_t lingered_bytes_ = 0;
  std::string body_;
  BufferEventPtr bev_;
  EventPtr timer_;
};

}  // namespace sparktrace::admin
