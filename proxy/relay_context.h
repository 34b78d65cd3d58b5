#pragma once
// What everything on one relay worker shares: its event loop, its receive-block pool, the
// connections with bytes to flush, and the objects waiting to be freed.
//
// Every libevent callback of the relay opens an EventScope. Work that must wait until the
// callback is over happens when the outermost scope closes: connections flush (once per event,
// however many frames it queued: what arrives together leaves together), and closed connections
// and finished calls are freed (never inside their own callbacks).
//
// The context sits below the connections and calls that use it: it knows them only as the two
// small interfaces below, not by their headers.

#include <event2/event.h>

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <vector>

#include "proxy/receive_blocks.h"

namespace sparktrace::proxy {

class SocketIo;

// Something with frames to write once the current event is over (an HTTP/2 connection).
class Flushable {
 public:
  virtual void Flush() = 0;

 protected:
  ~Flushable() = default;
};

// Something freed once the current event is over, never inside one of its own callbacks (a
// closed connection, a finished call).
class Retirable {
 public:
  virtual ~Retirable() = default;
};

class RelayContext {
 public:
  explicit RelayContext(event_base* base);
  RelayContext(const RelayContext&) = delete;
  RelayContext& operator=(const RelayContext&) = delete;
  ~RelayContext();

  event_base* base() const { return base_; }
  ReceiveBlockPool& blocks() { return blocks_; }
  // Where plaintext connections read into; what is read is handed to nghttp2 at once, so one
  // buffer serves every connection of the worker.
  std::span<std::uint8_t> read_buffer() { return read_buffer_; }

  // `connection` must stay alive until it is flushed (connections are retired, not freed, while
  // an event runs).
  void ScheduleFlush(Flushable* connection) { to_flush_.push_back(connection); }

  // What an asynchronous DNS lookup calls back with. evdns reports a cancelled lookup later (from
  // the loop, or from evdns_base_free), when the SocketIo that asked may be gone: the callback
  // gets this instead, and the SocketIo clears `io` when it stops. Freed once the callback ran,
  // or with the context (which must outlive the evdns_base).
  struct Resolution {
    SocketIo* io;
    RelayContext* context;
  };
  Resolution* NewResolution(SocketIo* io);
  void EndResolution(Resolution* resolution);
  // Freed after the current event.
  void Retire(std::unique_ptr<Retirable> object) { retired_.push_back(std::move(object)); }

  class EventScope {
   public:
    explicit EventScope(RelayContext& context) : context_(context) { ++context_.depth_; }
    ~EventScope() {
      if (--context_.depth_ == 0) context_.AfterEvent();
    }
    EventScope(const EventScope&) = delete;
    EventScope& operator=(const EventScope&) = delete;

   private:
    RelayContext& context_;
  };

 private:
  void AfterEvent();

  event_base* const base_;
  ReceiveBlockPool blocks_;
  std::vector<std::uint8_t> read_buffer_ = std::vector<std::uint8_t>(std::size_t{256} * 1024);
  std::vector<Flushable*> to_flush_;
  std::vector<std::unique_ptr<Retirable>> retired_;
  std::list<Resolution> resolutions_;  // few: one per upstream connection being resolved
  int depth_ = 0;
};

}  // namespace sparktrace::proxy
