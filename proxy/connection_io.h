#pragma once
// The byte transport under an Http2Connection: reads arrive as spans for nghttp2, writes leave
// from an evbuffer (which can hold receive blocks by reference).
//
// SocketIo, for plaintext, does its own socket I/O, as nginx does: it reads up to 256 KiB per
// recv into the worker's shared read buffer (libevent 2.1's bufferevent reads at most 4 KiB per
// call, one event-loop turn each, which capped a 4 MiB stream at a quarter of direct speed), and
// it writes as soon as a flush has produced bytes, registering for EV_WRITE only when the kernel
// pushes back. BufferEventIo wraps a libevent bufferevent, for TLS (bufferevent_openssl).
//
// Threads: one relay worker's loop.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <event2/buffer.h>
#include <event2/dns.h>
#include <event2/event.h>

#include "proxy/libevent_handles.h"
#include "proxy/relay_context.h"

namespace sparktrace::proxy {

class ConnectionIoHandler {
 public:
  virtual ~ConnectionIoHandler() = default;
  virtual void OnIoBytes(std::span<const std::uint8_t> bytes) = 0;
  // The output drained below the low watermark after it had been above it: produce more.
  virtual void OnIoWritable() = 0;
  virtual void OnIoConnected() = 0;
  virtual void OnIoClosed(std::string_view why) = 0;
};

class ConnectionIo {
 public:
  static constexpr std::size_t kLowWatermark = std::size_t{64} * 1024;

  virtual ~ConnectionIo() = default;
  virtual void Start(ConnectionIoHandler& handler) = 0;
  virtual evbuffer* output() = 0;
  // Writes what the output holds, now if the socket takes it; the rest when it is writable.
  virtual void Write() = 0;
  // No further callbacks; the socket closes with the object.
  virtual void Stop() = 0;
};

// A plaintext socket: an accepted one (fd given), or one that resolves and connects to
// host:port itself once started (Connect).
class SocketIo final : public ConnectionIo {
 public:
  SocketIo(RelayContext& context, evutil_socket_t fd);
  // Connects to host:port (resolved with `dns`) when started, giving up after `timeout`.
  static std::unique_ptr<SocketIo> Connect(RelayContext& context, evdns_base* dns, std::string host, int port,
                                           timeval timeout);
  ~SocketIo() override;

  void Start(ConnectionIoHandler& handler) override;
  evbuffer* output() override { return output_.get(); }
  void Write() override;
  void Stop() override;

 private:
  struct EvbufferDeleter {
    void operator()(evbuffer* buffer) const { evbuffer_free(buffer); }
  };

  static void OnReadable(evutil_socket_t, short, void* self);
  static void OnWritable(evutil_socket_t, short events, void* self);
  static void OnResolved(int result, evutil_addrinfo* addresses, void* self);
  void ConnectTo(const evutil_addrinfo* addresses);
  void Attach(evutil_socket_t fd);
  void Fail(std::string_view why);

  RelayContext& context_;
  evdns_base* dns_ = nullptr;
  std::string host_;
  int port_ = 0;
  timeval connect_timeout_{};
  evdns_getaddrinfo_request* resolving_ = nullptr;
  RelayContext::Resolution* resolution_ = nullptr;  // while a lookup is pending

  evutil_socket_t fd_ = -1;
  bool connecting_ = false;
  bool stopped_ = false;
  ConnectionIoHandler* handler_ = nullptr;
  std::unique_ptr<evbuffer, EvbufferDeleter> output_;
  EventPtr read_event_;
  EventPtr write_event_;
};

// A bufferevent (TLS: bufferevent_openssl), accepted or connecting.
class BufferEventIo final : public ConnectionIo {
 public:
  BufferEventIo(RelayContext& context, BufferEventPtr bufferevent)
      : context_(context), bufferevent_(std::move(bufferevent)) {}
  ~BufferEventIo() override;

  void Start(ConnectionIoHandler& handler) override;
  evbuffer* output() override { return bufferevent_get_output(bufferevent_.get()); }
  void Write() override {}  // the bufferevent writes on its own
  void Stop() override;

 private:
  static void OnRead(bufferevent* bev, void* self);
  static void OnWritten(bufferevent* bev, void* self);
  static void OnEvent(bufferevent* bev, short events, void* self);

  RelayContext& context_;
  BufferEventPtr bufferevent_;
  ConnectionIoHandler* handler_ = nullptr;
  bool stopped_ = false;
};

}  // namespace sparktrace::proxy
