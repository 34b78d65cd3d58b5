#include "proxy/connection_io.h"

#include <cerrno>
#include <cstring>

#include <event2/bufferevent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proxy/relay_context.h"

namespace sparktrace::proxy {
namespace {

// Reads per readable event before the loop turns to other connections: a fast sender must not
// starve them.
constexpr int kMaxReadsPerEvent = 4;

void SetSocketOptions(evutil_socket_t fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
}

}  // namespace

// --- SocketIo ------------------------------------------------------------------------------------

SocketIo::SocketIo(RelayContext& context, evutil_socket_t fd) : context_(context), output_(evbuffer_new()) {
  if (fd >= 0) Attach(fd);
}

std::unique_ptr<SocketIo> SocketIo::Connect(RelayContext& context, evdns_base* dns, std::string host, int port,
                                            timeval timeout) {
  auto io = std::make_unique<SocketIo>(context, -1);
  io->dns_ = dns;
  io->host_ = std::move(host);
  io->port_ = port;
  io->connect_timeout_ = timeout;
  io->connecting_ = true;
  return io;
}

SocketIo::~SocketIo() {
  Stop();
  if (fd_ >= 0) close(fd_);
}

void SocketIo::Attach(evutil_socket_t fd) {
  fd_ = fd;
  evutil_make_socket_nonblocking(fd_);
  SetSocketOptions(fd_);
  read_event_.reset(event_new(context_.base(), fd_, EV_READ | EV_PERSIST, OnReadable, this));
  write_event_.reset(event_new(context_.base(), fd_, EV_WRITE, OnWritable, this));
}

void SocketIo::Start(ConnectionIoHandler& handler) {
  handler_ = &handler;
  if (!connecting_) {
    event_add(read_event_.get(), nullptr);
    return;
  }
  evutil_addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  hints.ai_flags = EVUTIL_AI_ADDRCONFIG;
  const std::string port = std::to_string(port_);
  resolution_ = context_.NewResolution(this);
  // Returns null when it already answered (a numeric host): OnResolved has run then.
  evdns_getaddrinfo_request* request =
      evdns_getaddrinfo(dns_, host_.c_str(), port.c_str(), &hints, OnResolved, resolution_);
  if (resolution_ != nullptr) resolving_ = request;
}

void SocketIo::OnResolved(int result, evutil_addrinfo* addresses, void* arg) {
  auto* resolution = static_cast<RelayContext::Resolution*>(arg);
  SocketIo* io = resolution->io;
  RelayContext& context = *resolution->context;
  context.EndResolution(resolution);
  if (io == nullptr) {  // the SocketIo stopped (and may be freed) before the answer came
    if (addresses != nullptr) evutil_freeaddrinfo(addresses);
    return;
  }
  const RelayContext::EventScope scope(context);
  io->resolution_ = nullptr;
  io->resolving_ = nullptr;
  if (result != 0 || addresses == nullptr) {
    io->Fail(std::string("cannot resolve: ") + evutil_gai_strerror(result));
  } else {
    io->ConnectTo(addresses);
  }
  if (addresses != nullptr) evutil_freeaddrinfo(addresses);
}

void SocketIo::ConnectTo(const evutil_addrinfo* addresses) {
  if (stopped_) return;
  const evutil_socket_t fd = socket(addresses->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Fail(std::strerror(errno));
    return;
  }
  Attach(fd);
  if (connect(fd, addresses->ai_addr, static_cast<socklen_t>(addresses->ai_addrlen)) != 0 && errno != EINPROGRESS) {
    Fail(std::strerror(errno));
    return;
  }
  // Completion (or failure) shows as writability; the write event's timeout bounds the connect.
  event_add(write_event_.get(), &connect_timeout_);
}

void SocketIo::Fail(std::string_view why) {
  if (stopped_) return;
  Stop();
  handler_->OnIoClosed(why);
}

void SocketIo::Stop() {
  stopped_ = true;
  if (resolution_ != nullptr) {
    resolution_->io = nullptr;  // its callback must not come here
    resolution_ = nullptr;
  }
  if (resolving_ != nullptr) {
    evdns_getaddrinfo_request* request = resolving_;
    resolving_ = nullptr;
    evdns_getaddrinfo_cancel(request);
  }
  if (read_event_) event_del(read_event_.get());
  if (write_event_) event_del(write_event_.get());
}

void SocketIo::OnReadable(evutil_socket_t, short, void* self) {
  auto* io = static_cast<SocketIo*>(self);
  const RelayContext::EventScope scope(io->context_);
  const std::span<std::uint8_t> buffer = io->context_.read_buffer();
  for (int i = 0; i < kMaxReadsPerEvent && !io->stopped_; ++i) {
    const ssize_t n = recv(io->fd_, buffer.data(), buffer.size(), 0);
    if (n > 0) {
      io->handler_->OnIoBytes(buffer.first(static_cast<std::size_t>(n)));
      if (static_cast<std::size_t>(n) < buffer.size()) break;  // drained: no need for an EAGAIN round trip
      continue;
    }
    if (n == 0) {
      io->Fail("closed by peer");
    } else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      io->Fail(std::strerror(errno));
    }
    break;
  }
}

void SocketIo::Write() {
  if (stopped_ || connecting_ || fd_ < 0) return;
  while (evbuffer_get_length(output_.get()) > 0) {
    const int written = evbuffer_write(output_.get(), fd_);
    if (written > 0) continue;
    if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    Fail(written == 0 ? "closed by peer" : std::strerror(errno));
    return;
  }
  if (evbuffer_get_length(output_.get()) > 0) {
    if (!event_pending(write_event_.get(), EV_WRITE, nullptr)) event_add(write_event_.get(), nullptr);
  } else if (event_pending(write_event_.get(), EV_WRITE, nullptr)) {
    event_del(write_event_.get());
  }
}

void SocketIo::OnWritable(evutil_socket_t, short events, void* self) {
  auto* io = static_cast<SocketIo*>(self);
  const RelayContext::EventScope scope(io->context_);
  if (io->connecting_) {
    int error = 0;
    socklen_t length = sizeof error;
    if (events & EV_TIMEOUT) {
      io->Fail("connect timed out");
      return;
    }
    getsockopt(io->fd_, SOL_SOCKET, SO_ERROR, &error, &length);
    if (error != 0) {
      io->Fail(std::strerror(error));
      return;
    }
    io->connecting_ = false;
    event_add(io->read_event_.get(), nullptr);
    io->handler_->OnIoConnected();
    io->Write();
    return;
  }
  io->Write();
  if (!io->stopped_ && evbuffer_get_length(io->output_.get()) <= kLowWatermark) io->handler_->OnIoWritable();
}

// --- BufferEventIo -------------------------------------------------------------------------------

BufferEventIo::~BufferEventIo() { Stop(); }

void BufferEventIo::Start(ConnectionIoHandler& handler) {
  handler_ = &handler;
  if (const evutil_socket_t fd = bufferevent_getfd(bufferevent_.get()); fd >= 0) SetSocketOptions(fd);
  bufferevent_setcb(bufferevent_.get(), OnRead, OnWritten, OnEvent, this);
  bufferevent_setwatermark(bufferevent_.get(), EV_WRITE, kLowWatermark, 0);
  bufferevent_enable(bufferevent_.get(), EV_READ | EV_WRITE);
}

void BufferEventIo::Stop() {
  stopped_ = true;
  bufferevent_setcb(bufferevent_.get(), nullptr, nullptr, nullptr, nullptr);
  bufferevent_disable(bufferevent_.get(), EV_READ | EV_WRITE);
}

void BufferEventIo::OnRead(bufferevent* bev, void* self) {
  auto* io = static_cast<BufferEventIo*>(self);
  const RelayContext::EventScope scope(io->context_);
  evbuffer* input = bufferevent_get_input(bev);
  while (!io->stopped_ && evbuffer_get_length(input) > 0) {
    evbuffer_iovec chunk{};
    if (evbuffer_peek(input, -1, nullptr, &chunk, 1) < 1) break;
    io->handler_->OnIoBytes({static_cast<const std::uint8_t*>(chunk.iov_base), chunk.iov_len});
    if (!io->stopped_) evbuffer_drain(input, chunk.iov_len);
  }
}

void BufferEventIo::OnWritten(bufferevent* /*bev*/, void* self) {
  auto* io = static_cast<BufferEventIo*>(self);
  const RelayContext::EventScope scope(io->context_);
  if (!io->stopped_) io->handler_->OnIoWritable();
}

void BufferEventIo::OnEvent(bufferevent* bev, short events, void* self) {
  auto* io = static_cast<BufferEventIo*>(self);
  const RelayContext::EventScope scope(io->context_);
  if (events & BEV_EVENT_CONNECTED) {
    bufferevent_set_timeouts(bev, nullptr, nullptr);  // the write timeout only bounded the connect
    if (const evutil_socket_t fd = bufferevent_getfd(bev); fd >= 0) SetSocketOptions(fd);
    io->handler_->OnIoConnected();
    return;
  }
  if (events & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
    std::string why = events & BEV_EVENT_EOF ? "closed by peer" : events & BEV_EVENT_TIMEOUT ? "timed out" : "";
    if (why.empty()) {
      const int error = EVUTIL_SOCKET_ERROR();
      why = error != 0 ? evutil_socket_error_to_string(error) : "TLS handshake failed";
    }
    io->Stop();
    io->handler_->OnIoClosed(why);
  }
}

}  // namespace sparktrace::proxy
