#include "admin/http_connection.h"

#include <event2/buffer.h>
#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include "admin/http_message.h"

namespace sparktrace::admin {
namespace {

// libevent stops reading a socket once this much waits in its input buffer; each state drains it
// (into the parser, the body, or nowhere), so it bounds what one read can add.
constexpr std::size_t kReadHighWater = std::size_t{64} * 1024;
// After the last answer of a closing connection: for how long, and how many of its late request
// bytes are read and dropped, so that the client reads the answer instead of a reset (close() with
// unread data sends RST). The byte bound stops a flood that never reads from costing a core for the
// whole time; 16 MiB covers the rest of a refused body of the event push's default size.
constexpr std::chrono::milliseconds kLingerTimeout{2'000};
constexpr std::size_t kLingerMaxBytes = std::size_t{16} << 20;

timeval ToTimeval(std::chrono::milliseconds duration) {
  return timeval{static_cast<decltype(timeval::tv_sec)>(duration.count() / 1000),
                 static_cast<decltype(timeval::tv_usec)>((duration.count() % 1000) * 1000)};
}

RefuseReason ReasonOf(HeadError error) {
  switch (error) {
    case HeadError::kUriTooLong:
      return RefuseReason::kUriTooLong;
    case HeadError::kHeadersTooLarge:
      return RefuseReason::kHeadersTooLarge;
    default:
      return RefuseReason::kBadRequest;
  }
}

}  // namespace

HttpConnection::HttpConnection(event_base* base, evutil_socket_t fd, std::uint64_t id,
                               const AdminLimits& limits, ConnectionOwner& owner)
    : id_(id),
      limits_(limits),
      owner_(owner),
      parser_(HeadLimits{limits.max_request_line_bytes, limits.max_header_bytes, limits.max_headers}),
      bev_(bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE)),
      timer_(evtimer_new(base, OnTimer, this)) {
  if (!bev_) evutil_closesocket(fd);
}

HttpConnection::~HttpConnection() = default;

bool HttpConnection::Start() {
  if (!bev_ || !timer_) {
    state_ = State::kClosed;
    bev_.reset();
    return false;
  }
  bufferevent_setcb(bev_.get(), OnRead, OnWrite, OnEvent, this);
  bufferevent_setwatermark(bev_.get(), EV_READ, 0, kReadHighWater);
  // A write timeout runs only while output waits: an answer nobody reads is dropped after this long
  // without progress. Reads have no libevent timeout; the connection's own timer bounds each state.
  const timeval write_timeout = ToTimeval(limits_.write_timeout);
  bufferevent_set_timeouts(bev_.get(), nullptr, &write_timeout);
  bufferevent_enable(bev_.get(), EV_READ);
  // The first request's head counts from the accept: a connection that never sends one holds a slot
  // for header_timeout, not idle_timeout.
  Arm(limits_.header_timeout);
  return true;
}

HttpConnection::Loss HttpConnection::loss_if_closed() const {
  switch (state_) {
    case State::kIdle:
    case State::kLingering:
    case State::kClosed:
      return Loss::kNothing;
    case State::kReadingHead:
      return Loss::kHead;
    case State::kReadingBody:
      return Loss::kBody;
    case State::kProcessing:
    case State::kWriting:
      break;
  }
  return Loss::kAnswer;
}

void HttpConnection::OnRead(bufferevent*, void* self) { static_cast<HttpConnection*>(self)->Readable(); }
void HttpConnection::OnWrite(bufferevent*, void* self) { static_cast<HttpConnection*>(self)->Written(); }
void HttpConnection::OnTimer(evutil_socket_t, short, void* self) {
  static_cast<HttpConnection*>(self)->TimedOut();
}

void HttpConnection::OnEvent(bufferevent*, short events, void* self) {
  auto* connection = static_cast<HttpConnection*>(self);
  if ((events & BEV_EVENT_TIMEOUT) != 0) connection->owner_.OnRefused(RefuseReason::kWriteTimeout);
  // EOF or a socket error: the client is gone (or, lingering, has read the answer and closed).
  connection->Close();
}

void HttpConnection::Readable() {
  switch (state_) {
    case State::kReadingHead:
    case State::kIdle:
      ParseHead();
      break;
    case State::kReadingBody:
      ConsumeBody();
      break;
    case State::kLingering: {
      evbuffer* input = bufferevent_get_input(bev_.get());
      lingered_bytes_ += evbuffer_get_length(input);
      evbuffer_drain(input, evbuffer_get_length(input));
      if (lingered_bytes_ > kLingerMaxBytes) Close();
      break;
    }
    default:
      break;  // reading is off while a request is answered; bytes wait for the next request
  }
}

void HttpConnection::ParseHead() {
  evbuffer* input = bufferevent_get_input(bev_.get());
  while ((state_ == State::kReadingHead || state_ == State::kIdle) && evbuffer_get_length(input) > 0) {
    if (state_ == State::kIdle) {
      state_ = State::kReadingHead;
      Arm(limits_.header_timeout);
    }
    evbuffer_iovec chunk{};
    if (evbuffer_peek(input, -1, nullptr, &chunk, 1) < 1) break;
    const auto progress =
        parser_.Feed(std::string_view(static_cast<const char*>(chunk.iov_base), chunk.iov_len));
    evbuffer_drain(input, progress.consumed);
    if (progress.status == RequestHeadParser::Status::kError) {
      const HeadError error = parser_.error();
      std::string body = "malformed request\n";
      if (error == HeadError::kUriTooLong) {
        body = "request line longer than " + std::to_string(limits_.max_request_line_bytes) + " bytes\n";
      } else if (error == HeadError::kHeadersTooLarge) {
        body = "request headers over " + std::to_string(limits_.max_header_bytes) + " bytes or " +
               std::to_string(limits_.max_headers) + " lines\n";
      } else if (error == HeadError::kVersionNotSupported) {
        body = "HTTP/1.0 and HTTP/1.1 only\n";
      }
      Refuse(ReasonOf(error), HeadErrorStatus(error), std::move(body));
      return;
    }
    if (progress.status == RequestHeadParser::Status::kDone) HeadComplete();
  }
}

void HttpConnection::HeadComplete() {
  head_ = parser_.TakeHead();
  parser_.Reset();
  Disarm();
  keep_alive_ = head_.KeepAlive();
  body_read_ = false;
  body_bytes_ = 0;
  const BodyLength length = RequestBodyLength(head_);
  if (length.error_status == 411) {
    Refuse(RefuseReason::kLengthRequired, 411, "send the body with Content-Length (no Transfer-Encoding)\n");
    return;
  }
  if (length.error_status != 0) {
    Refuse(RefuseReason::kBadRequest, 400, "malformed Content-Length\n");
    return;
  }
  body_bytes_ = length.bytes;
  state_ = State::kProcessing;
  bufferevent_disable(bev_.get(), EV_READ);
  owner_.OnHead(*this, head_, body_bytes_);
}

void HttpConnection::ReadBody() {
  if (state_ != State::kProcessing) return;
  state_ = State::kReadingBody;
  body_read_ = true;
  body_.clear();  // grows as bytes arrive: a declared length alone reserves nothing
  evbuffer* input = bufferevent_get_input(bev_.get());
  if (body_bytes_ > 0 && head_.version_minor >= 1 && head_.ExpectsContinue() &&
      evbuffer_get_length(input) == 0) {
    constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    bufferevent_write(bev_.get(), kContinue.data(), kContinue.size());
  }
  body_deadline_ = std::chrono::steady_clock::now() + limits_.body_timeout;
  ArmBody();
  bufferevent_enable(bev_.get(), EV_READ);
  ConsumeBody();
}

void HttpConnection::ConsumeBody() {
  evbuffer* input = bufferevent_get_input(bev_.get());
  const std::size_t take =
      std::min<std::size_t>(static_cast<std::size_t>(body_bytes_) - body_.size(), evbuffer_get_length(input));
  if (take > 0) {
    const std::size_t old_size = body_.size();
    body_.resize(old_size + take);
    evbuffer_remove(input, body_.data() + old_size, take);
  }
  if (body_.size() < body_bytes_) {
    if (take > 0) ArmBody();  // it keeps arriving: the idle timeout counts from this byte
    return;
  }
  Disarm();
  state_ = State::kProcessing;
  bufferevent_disable(bev_.get(), EV_READ);
  owner_.OnBody(*this, std::exchange(body_, std::string()));
}

void HttpConnection::Respond(const HttpResponse& response, bool close) {
  if (state_ != State::kProcessing) return;
  // A body never read would be taken for the next request: the connection ends with this answer.
  const bool body_unread = body_bytes_ > 0 && !body_read_;
  close_after_ = close || !keep_alive_ || body_unread;
  const ResponseFraming framing{head_.method == "HEAD", !close_after_, head_.version_minor};
  const std::string head = SerializeResponseHead(response, framing);
  state_ = State::kWriting;
  Disarm();
  bufferevent_disable(bev_.get(), EV_READ);
  evbuffer* output = bufferevent_get_output(bev_.get());
  evbuffer_add(output, head.data(), head.size());
  if (SendsBody(response, framing)) evbuffer_add(output, response.body.data(), response.body.size());
}

void HttpConnection::Written() {
  if (state_ != State::kWriting) return;  // e.g. "100 Continue" went out
  if (evbuffer_get_length(bufferevent_get_output(bev_.get())) > 0) return;
  if (close_after_) {
    StartLingering();
    return;
  }
  state_ = State::kIdle;
  head_ = RequestHead{};
  body_bytes_ = 0;
  body_read_ = false;
  Arm(limits_.idle_timeout);
  bufferevent_enable(bev_.get(), EV_READ);
  // A pipelined request may already wait in the buffer: no read event will announce it again.
  if (evbuffer_get_length(bufferevent_get_input(bev_.get())) > 0) Readable();
}

void HttpConnection::StartLingering() {
  state_ = State::kLingering;
  // Our FIN tells a client reading to EOF (HTTP/1.0) that the answer is complete; its EOF ends this.
  shutdown(bufferevent_getfd(bev_.get()), SHUT_WR);
  Arm(kLingerTimeout);
  bufferevent_enable(bev_.get(), EV_READ);
  Readable();
}

void HttpConnection::TimedOut() {
  switch (state_) {
    case State::kReadingHead:
      if (parser_.started()) {
        Refuse(RefuseReason::kHeaderTimeout, 408, "request head not received within the header timeout\n");
      } else {
        owner_.OnRefused(RefuseReason::kHeaderTimeout);  // no byte of a request: nothing to answer
        Close();
      }
      break;
    case State::kIdle:
      owner_.OnRefused(RefuseReason::kIdleTimeout);
      Close();
      break;
    case State::kReadingBody:
      if (std::chrono::steady_clock::now() >= body_deadline_) {
        Refuse(RefuseReason::kBodyTimeout, 408, "request body not received within the body timeout\n");
      } else {
        Refuse(RefuseReason::kBodyTimeout, 408, "no byte of the request body within the body idle timeout\n");
      }
      break;
    case State::kLingering:
      Close();
      break;
    default:
      break;
  }
}

void HttpConnection::Refuse(RefuseReason reason, int status, std::string body) {
  owner_.OnRefused(reason);
  state_ = State::kProcessing;
  Respond(TextResponse(status, std::move(body)), /*close=*/true);
}

void HttpConnection::Close() {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  timer_.reset();
  bev_.reset();
  owner_.OnClosed(*this);
}

void HttpConnection::Arm(std::chrono::milliseconds timeout) {
  const timeval when = ToTimeval(timeout);
  evtimer_add(timer_.get(), &when);
}

void HttpConnection::ArmBody() {
  // Rounded up, so that a timer for the deadline fires at or after it (TimedOut tells them apart).
  const auto left =
      std::chrono::ceil<std::chrono::milliseconds>(body_deadline_ - std::chrono::steady_clock::now());
  Arm(std::clamp(left, std::chrono::milliseconds(0), limits_.body_idle_timeout));
}

void HttpConnection::Disarm() { evtimer_del(timer_.get()); }

}  // namespace sparktrace::admin
